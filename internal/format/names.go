package format

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Object names: every object a job makes in the shm directory is named
// shmrun.<job>.<id>, which is how the launcher and shmrun --cleanup find a
// job's objects (and never touch anyone else's).

// Prefix starts the name of every object shmrun creates.
const Prefix = "shmrun."

// NewJobID returns a random 128-bit job id in hex (32 characters).
func NewJobID() string { return randomHex(16) }

// NewObjectID returns a random 64-bit object id in hex (16 characters).
func NewObjectID() string { return randomHex(8) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("format: crypto/rand failed: " + err.Error()) // never returns an error on Linux
	}
	return hex.EncodeToString(b)
}

// ObjectName is the file name of object id of job: shmrun.<job>.<id>.
func ObjectName(job, id string) string { return Prefix + job + "." + id }

// ValidJobID reports whether s looks like a job id: 1 to 64 characters of
// [0-9a-f]. It keeps names built from the environment free of '/' and '.'.
func ValidJobID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// SplitName returns the job id and object id of a file name made by
// ObjectName, and false for any other name.
func SplitName(name string) (job, id string, ok bool) {
	rest, found := strings.CutPrefix(name, Prefix)
	if !found {
		return "", "", false
	}
	job, id, found = strings.Cut(rest, ".")
	if !found || !ValidJobID(job) || id == "" || strings.ContainsAny(id, "/.") {
		return "", "", false
	}
	return job, id, true
}

// BuildDirPrefix starts the name of the directory, in the launcher's
// temporary directory, where it builds a job's Go programs:
// shmrun-build.<job>. The job's lock file holds that directory's absolute
// path (one line), so that shmrun --cleanup removes it, once the job's lock
// is free, when a killed launcher could not.
const BuildDirPrefix = "shmrun-build."

// BuildDirName is the base name of job's build directory.
func BuildDirName(job string) string { return BuildDirPrefix + job }
