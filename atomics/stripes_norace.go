//go:build !race

package atomics

// raceOrder is stripes_race.go's, which only race builds need.
type raceOrder struct{}

func newRaceOrder(int) raceOrder { return raceOrder{} }

func (*raceOrder) acquire(int) {}
func (*raceOrder) release(int) {}
