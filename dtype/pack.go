package dtype

// PackSize is the bytes Pack writes for count instances of t
// (MPI_Pack_size): count × Size. Local.
func PackSize(count int, t *Type) (int64, error) {
	if err := check(t, "PackSize"); err != nil {
		return 0, err
	}
	if count < 0 {
		return 0, errorf(ErrCount, "PackSize: count %d is negative", count)
	}
	n, ok := mul(int64(count), t.size)
	if !ok {
		return 0, errorf(ErrCount, "PackSize: %d × %d bytes overflow", count, t.size)
	}
	return n, nil
}

// Pack copies the data of count instances of the committed type t in src
// into dst, contiguous and in type-map order (MPI_Pack), and returns the
// bytes written. Local. The instances must lie inside src and dst must hold
// PackSize bytes (ErrBuffer otherwise, and nothing is written).
func Pack(src []byte, count int, t *Type, dst []byte) (int, error) {
	n, err := packCheck("Pack", src, count, t, dst)
	if err != nil {
		return 0, err
	}
	at := int64(0)
	err = t.Each(count, func(off, l int64) bool {
		copy(dst[at:at+l], src[off:off+l])
		at += l
		return true
	})
	return int(n), err
}

// Unpack is Pack's inverse (MPI_Unpack): it scatters PackSize bytes of src
// into count instances of t in dst, and returns the bytes read. Local.
// Instances whose entries overlap are ErrType, as for a receive (FitsRecv).
func Unpack(src []byte, dst []byte, count int, t *Type) (int, error) {
	n, err := packCheck("Unpack", dst, count, t, src)
	if err != nil {
		return 0, err
	}
	if err := t.FitsRecv(count, len(dst)); err != nil {
		return 0, err
	}
	at := int64(0)
	err = t.Each(count, func(off, l int64) bool {
		copy(dst[off:off+l], src[at:at+l])
		at += l
		return true
	})
	return int(n), err
}

// UnpackPrefix scatters src, which may be shorter than the packed size of
// count instances of t, into those instances in dst in type-map order: a
// short message fills the bytes it covers and no more (MPI_Recv into a
// derived datatype). It returns the bytes read. Local. t must be
// committed and the instances must fit in dst, as the receiving call
// checked.
func UnpackPrefix(src []byte, dst []byte, count int, t *Type) (int, error) {
	at := 0
	err := t.Each(count, func(off, l int64) bool {
		at += copy(dst[off:off+l], src[at:])
		return at < len(src)
	})
	return at, err
}

// packCheck checks that count instances of t fit in buf and that packed
// holds their packed size, which it returns.
func packCheck(call string, buf []byte, count int, t *Type, packed []byte) (int64, error) {
	if _, _, err := t.committedForm(call); err != nil {
		return 0, err
	}
	if err := t.Fits(count, len(buf)); err != nil {
		return 0, err
	}
	n, err := PackSize(count, t)
	if err != nil {
		return 0, err
	}
	if n > int64(len(packed)) {
		return 0, errorf(ErrBuffer, "%s: %d × %v packs into %d bytes, the packed buffer has %d", call, count, t, n, len(packed))
	}
	return n, nil
}
