package main

import (
	"fmt"
	"time"

	"github.com/shmrun/shmrun/launcher"
)

// parseDuration reads --timeout: a Go duration such as 90s or 5m.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--timeout %q: want a positive duration such as 30s or 5m: %w", s, launcher.ErrUsage)
	}
	return d, nil
}
