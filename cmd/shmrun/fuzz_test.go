package main

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shmrun/shmrun/launcher"
)

// FuzzCommandLine: whatever the arguments (flags, MPMD ":" parts, -x specs,
// --timeout durations), parsing never panics; a refusal is one line; and an
// accepted job has one part per ":"-separated part, each running exactly the
// program and arguments written after its flags, with the timeout the
// duration given. Arguments are the input split at NUL bytes.
func FuzzCommandLine(f *testing.F) {
	for _, args := range [][]string{
		{"-n", "4", "prog", "-v"},
		{"-n", "1", "./server", ":", "-n", "3", "./client", "x"},
		{"--timeout", "30s", "-x", "GODEBUG=gctrace=1", "-n", "2", "prog"},
		{"--timeout", "1h2m3.5s", "--oversubscribe", "--tag-output", "prog"},
		{"--timeout", "-5s", "prog"},
		{"--timeout=0", "prog"},
		{"--np=", "prog"},
		{"-n", "1", "prog", ":", ":", "-n", "1", "prog"},
		{":", "-n", "1", "prog"},
		{"-n", "1", "prog", ":", "--tag-output", "prog"},
		{"--bind-to", "core", "--report-bindings", "--stdin", "none", "--shm-dir", "/tmp", "prog", ":", "prog2"},
		{"-x", "SHMRUN_WAIT=spin=10", "-x", "UNSET_FOR_FUZZ", "prog"},
		{"--cleanup"}, {"--help"}, {"--version"},
		{"--no-such\nflag", "prog"},
		{"-n", "9223372036854775807", "prog", ":", "-n", "99999999999999999999", "prog"},
	} {
		f.Add(strings.Join(args, "\x00"))
	}
	f.Fuzz(func(t *testing.T, line string) {
		var args []string
		if line != "" {
			args = strings.Split(line, "\x00")
		}
		o, _, cfg, err := parseArgs(args, io.Discard)
		if err != nil {
			if msg := usageLine(err); strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("args %q: usage message of more than one line: %q", args, msg)
			}
			return
		}
		if o.help || o.version || o.cleanup {
			return
		}
		parts := splitParts(args)
		if len(cfg.Parts) != len(parts) {
			t.Fatalf("args %q: %d parts, want %d", args, len(cfg.Parts), len(parts))
		}
		for i, p := range cfg.Parts {
			run := append([]string{p.Prog}, p.Args...)
			if len(parts[i]) < len(run) || !slices.Equal(parts[i][len(parts[i])-len(run):], run) {
				t.Fatalf("args %q: part %d runs %q, not the end of %q", args, i+1, run, parts[i])
			}
		}
		if o.timeout == "" && cfg.Timeout != 0 {
			t.Fatalf("args %q: timeout %v without --timeout", args, cfg.Timeout)
		}
		if o.timeout != "" {
			if d, perr := time.ParseDuration(o.timeout); perr != nil || d != cfg.Timeout || d <= 0 {
				t.Fatalf("args %q: --timeout %q gave %v", args, o.timeout, cfg.Timeout)
			}
		}
		if len(cfg.Env) != len(o.env) {
			t.Fatalf("args %q: %d -x given, %d kept", args, len(o.env), len(cfg.Env))
		}
		// The job is still to be validated; that must not fail oddly either.
		if err := cfg.Validate(len(launcher.CPUs())); err != nil && !errors.Is(err, launcher.ErrUsage) {
			t.Fatalf("args %q: Validate = %v, not a usage error", args, err)
		}
	})
}
