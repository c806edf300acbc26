//go:build !race

package rmacheck

// storeRelaxed stores v at p with no ordering and no atomic instruction
// (a plain move): for a mark whose late arrival costs a missed report at
// worst (see repeat). The race detector's build uses an atomic store,
// which it can see.
func storeRelaxed(p *uint32, v uint32) { *p = v }

// loadRelaxed loads *p with no ordering (a plain move).
func loadRelaxed(p *uint32) uint32 { return *p }
