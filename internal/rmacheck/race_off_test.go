//go:build !race

package rmacheck

const raceOn = false
