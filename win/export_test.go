package win

// SetMappedHook makes f see the directory and name of every window segment
// this process maps, before the segment is unlinked (for the C interop
// test, which runs it in one rank process only). It returns the restore
// function.
func SetMappedHook(f func(dir, name string)) (restore func()) {
	old := testHookMapped
	testHookMapped = f
	return func() { testHookMapped = old }
}
