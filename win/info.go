//go:build !mpi

package win

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/shmrun/shmrun/internal/format"
)

type config struct {
	orderingStrict bool // all of rar,raw,war,waw
	ordering       string
	sameOp         bool
	noLocks        bool
	noncontig      bool
	sameSize       bool
	sameDispUnit   bool
	noReserve      bool
	hugePages      bool
	mempolicy      string // "local", "interleave" or "node:N"
	policyNode     int    // N of node:N
	granularity    int    // mpi_accumulate_granularity, bytes (0: one element)
	maxAttach      int    // shmrun_max_attach: regions of a dynamic window
	minAlign       int64  // mpi_minimum_memory_alignment: every part's (1: none)
}

func parseInfo(info Info) (config, error) {
	c := config{orderingStrict: true, ordering: "rar,raw,war,waw", mempolicy: "local", maxAttach: format.DefaultMaxAttach, minAlign: 1}
	for _, n := range []struct {
		key      string
		dst      *int
		min, max int
	}{{"mpi_accumulate_granularity", &c.granularity, 0, 1 << 30}, {"shmrun_max_attach", &c.maxAttach, 1, 1 << 20}} {
		if v, ok := info[n.key]; ok {
			x, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || x < n.min || x > n.max {
				return c, errorf(ErrInfo, "info %s=%q: want an integer from %d to %d", n.key, v, n.min, n.max)
			}
			*n.dst = x
		}
	}
	if v, ok := info["mpi_minimum_memory_alignment"]; ok {
		x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || x <= 0 || x&(x-1) != 0 || x > format.MaxMinAlign {
			return c, errorf(ErrInfo, "info mpi_minimum_memory_alignment=%q: want a power of two up to %d", v, format.MaxMinAlign)
		}
		c.minAlign = x
	}
	if v, ok := info["shmrun_mempolicy"]; ok {
		switch v = strings.TrimSpace(v); {
		case v == "local", v == "interleave":
			c.mempolicy = v
		case strings.HasPrefix(v, "node:"):
			n, err := strconv.Atoi(v[len("node:"):])
			if err != nil || n < 0 || n >= maxNodes {
				return c, errorf(ErrInfo, "info shmrun_mempolicy=%q: node:N wants a node number 0..%d", v, maxNodes-1)
			}
			c.mempolicy, c.policyNode = fmt.Sprintf("node:%d", n), n
		default:
			return c, errorf(ErrInfo, "info shmrun_mempolicy=%q: want local, interleave or node:N", v)
		}
	}
	if v, ok := info["accumulate_ordering"]; ok {
		ord, err := parseOrdering(v)
		if err != nil {
			return c, err
		}
		c.ordering = ord
		c.orderingStrict = ord == "rar,raw,war,waw"
	}
	if v, ok := info["accumulate_ops"]; ok {
		switch v {
		case "same_op_no_op":
		case "same_op":
			c.sameOp = true
		default:
			return c, errorf(ErrInfo, "info accumulate_ops=%q: want same_op_no_op or same_op", v)
		}
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{
		{"no_locks", &c.noLocks}, {"alloc_shared_noncontig", &c.noncontig}, {"same_size", &c.sameSize},
		{"same_disp_unit", &c.sameDispUnit}, {"shmrun_no_reserve", &c.noReserve}, {"shmrun_huge_pages", &c.hugePages},
	} {
		if v, ok := info[b.key]; ok {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "true":
				*b.dst = true
			case "false":
				*b.dst = false
			default:
				return c, errorf(ErrInfo, "info %s=%q: want true or false", b.key, v)
			}
		}
	}
	return c, nil
}

func parseOrdering(v string) (string, error) {
	if strings.TrimSpace(v) == "none" {
		return "none", nil
	}
	seen := map[string]bool{}
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		switch p {
		case "rar", "raw", "war", "waw":
			seen[p] = true
		default:
			return "", errorf(ErrInfo, "info accumulate_ordering=%q: %q is not one of rar, raw, war, waw, none", v, p)
		}
	}
	keys := slices.Sorted(maps.Keys(seen))
	return strings.Join(keys, ","), nil
}

func (c config) info() Info {
	b := func(v bool) string { return fmt.Sprint(v) }
	ops := "same_op_no_op"
	if c.sameOp {
		ops = "same_op"
	}
	in := Info{
		"accumulate_ordering":        c.ordering,
		"accumulate_ops":             ops,
		"no_locks":                   b(c.noLocks),
		"alloc_shared_noncontig":     b(c.noncontig),
		"same_size":                  b(c.sameSize),
		"same_disp_unit":             b(c.sameDispUnit),
		"shmrun_no_reserve":          b(c.noReserve),
		"shmrun_huge_pages":          b(c.hugePages),
		"shmrun_mempolicy":           c.mempolicy,
		"mpi_accumulate_granularity": strconv.Itoa(c.granularity),
	}
	if c.minAlign > 1 {
		in["mpi_minimum_memory_alignment"] = strconv.FormatInt(c.minAlign, 10)
	}
	return in
}
