//go:build !race

package faults

const raceBuild = false
