package dtype

import "github.com/shmrun/shmrun/internal/dtypehook"

func init() {
	dtypehook.SetAlign = func(x any, align int64) error {
		t, _ := x.(*Type)
		if t == nil || !t.valid() {
			return errorf(ErrType, "SetAlign: not a datatype")
		}
		if align < 1 || align&(align-1) != 0 || t.hasUB || t.comp.Load() != nil {
			return errorf(ErrArg, "SetAlign: alignment %d of %v: not a power of two, or the type has an upper bound set or is in use", align, t)
		}
		t.align = max(t.align, align)
		if ext := t.ub - t.lb; ext%t.align != 0 {
			t.ub += t.align - ext%t.align // MPI's ε, as build rounds
		}
		return nil
	}
}
