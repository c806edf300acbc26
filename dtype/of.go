package dtype

import (
	"reflect"

	"github.com/shmrun/shmrun/atomics"
)

// Of returns the type of a Go type T (its MPI type map): the basic type of
// an integer, float or complex type (named types by their underlying type;
// int and uint are 64-bit), of atomics' pair types (atomics.DoubleInt is
// MPI_DOUBLE_INT), an array as Contiguous, and a struct as a Struct of its
// fields at their offsets, resized to Go's size of T so that a []T is
// count instances. Blank (_) fields are padding, not data. Types holding Go
// pointers (pointers, slices, strings, maps, channels, functions,
// interfaces), bool and uintptr are ErrType. Local; the result is not
// committed.
func Of[T any]() (*Type, error) {
	return ofType(reflect.TypeFor[T]())
}

var pairTypes = map[reflect.Type]atomics.Type{
	reflect.TypeFor[atomics.FloatInt]():  atomics.FloatIntT,
	reflect.TypeFor[atomics.DoubleInt](): atomics.DoubleIntT,
	reflect.TypeFor[atomics.LongInt]():   atomics.LongIntT,
	reflect.TypeFor[atomics.TwoInt]():    atomics.TwoIntT,
	reflect.TypeFor[atomics.ShortInt]():  atomics.ShortIntT,
}

var kinds = map[reflect.Kind]atomics.Type{
	reflect.Int8: atomics.Int8, reflect.Int16: atomics.Int16, reflect.Int32: atomics.Int32, reflect.Int64: atomics.Int64, reflect.Int: atomics.Int64,
	reflect.Uint8: atomics.Uint8, reflect.Uint16: atomics.Uint16, reflect.Uint32: atomics.Uint32, reflect.Uint64: atomics.Uint64, reflect.Uint: atomics.Uint64,
	reflect.Float32: atomics.Float32, reflect.Float64: atomics.Float64, reflect.Complex64: atomics.Complex64, reflect.Complex128: atomics.Complex128,
}

func ofType(rt reflect.Type) (*Type, error) {
	if p, ok := pairTypes[rt]; ok {
		return Basic(p), nil
	}
	if b, ok := kinds[rt.Kind()]; ok && rt.Size() == uintptr(b.Size()) {
		return Basic(b), nil
	}
	switch rt.Kind() {
	case reflect.Array:
		e, err := ofType(rt.Elem())
		if err != nil {
			return nil, err
		}
		return Contiguous(rt.Len(), e)
	case reflect.Struct:
		var bls []int
		var displs []int64
		var ts []*Type
		for i := range rt.NumField() {
			f := rt.Field(i)
			if f.Name == "_" {
				continue
			}
			ft, err := ofType(f.Type)
			if err != nil {
				return nil, errorf(ErrType, "Of: field %s of %v: %v", f.Name, rt, err)
			}
			bls, displs, ts = append(bls, 1), append(displs, int64(f.Offset)), append(ts, ft)
		}
		st, err := Struct(bls, displs, ts)
		if err != nil {
			return nil, err
		}
		return Resized(st, 0, int64(rt.Size()))
	}
	return nil, errorf(ErrType, "Of: %v has no MPI type (pointers, slices, strings, maps, channels, functions, interfaces, bool and uintptr have none)", rt)
}
