package comm

// SingleCopy reports whether c's collectives move large payloads by single
// copy (for tests in package comm_test).
func SingleCopy(c *Comm) bool { return c.coll != nil && c.coll.single }
