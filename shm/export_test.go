package shm

// ReserveUnchecked and PopulateUnchecked skip the statfs check, so that a
// test can make a reservation fail midway.
func (o *Object) ReserveUnchecked(dir string, off, length int64) error {
	return o.reserve(dir, off, length, FreeBytes(dir))
}

func (o *Object) PopulateUnchecked(dir string, m []byte, off, length int64) error {
	return o.populate(dir, m, off, length, FreeBytes(dir))
}
