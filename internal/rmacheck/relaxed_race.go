//go:build race

package rmacheck

import "sync/atomic"

// storeRelaxed is relaxed.go's, as an atomic store the race detector sees.
func storeRelaxed(p *uint32, v uint32) { atomic.StoreUint32(p, v) }

// loadRelaxed is relaxed.go's, as an atomic load.
func loadRelaxed(p *uint32) uint32 { return atomic.LoadUint32(p) }
