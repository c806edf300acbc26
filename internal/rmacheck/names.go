package rmacheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Names: a record holds numbers, not text, for its call and its site (the
// strings are most of a record's cost to write). A process numbers the
// strings it uses in its own table (Name), and writes each new one to its
// names file before any record can use its number; the rank that finds a
// conflict reads the other rank's strings from that file (nameOf).
//
// The names file is names-<world rank>.txt in the check directory, a line
// per name: its number, a tab, the string quoted as Go quotes it.

var (
	namesMu  sync.Mutex
	nameIDs  = map[string]uint32{}
	names    = []string{""} // number 0 is no name
	namesOut *os.File       // open from Start on
)

// Name returns s's number in this process's records, numbering it first
// if it is new. Package-level variables may call it before Start: the
// names so far are written when Start opens the file.
func Name(s string) uint32 {
	namesMu.Lock()
	defer namesMu.Unlock()
	if id, ok := nameIDs[s]; ok {
		return id
	}
	id := uint32(len(names))
	names = append(names, s)
	nameIDs[s] = id
	if namesOut != nil {
		writeName(namesOut, id, s)
	}
	return id
}

func writeName(f *os.File, id uint32, s string) {
	// One write per line: a reader never sees half of one it needs (a
	// name is written before a record using it is published).
	_, _ = f.WriteString(strconv.FormatUint(uint64(id), 10) + "\t" + strconv.Quote(s) + "\n")
}

// startNames opens this rank's names file and writes the names so far.
func startNames(me int) error {
	f, err := os.OpenFile(namesPath(me), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("rmacheck: %v", err)
	}
	namesMu.Lock()
	defer namesMu.Unlock()
	for id, s := range names[1:] {
		writeName(f, uint32(id+1), s)
	}
	namesOut = f
	return nil
}

func namesPath(rank int) string { return filepath.Join(dir, fmt.Sprintf("names-%d.txt", rank)) }

// localName is this process's name id ("" if none).
func localName(id uint32) string {
	namesMu.Lock()
	defer namesMu.Unlock()
	if int(id) < len(names) {
		return names[id]
	}
	return ""
}

// nameOf is world rank r's name id: this process's own table, or r's
// names file, read again when it lacks id (r may have added it since).
// p.mu is held.
func (p *Proc) nameOf(r int, id uint32) string {
	if r == p.me || id == 0 {
		return localName(id)
	}
	if s, ok := p.others[r][id]; ok {
		return s
	}
	b, err := os.ReadFile(namesPath(r))
	if err != nil {
		return fmt.Sprintf("? (rank %d's names: %v)", r, err)
	}
	m := parseNames(b)
	if p.others == nil {
		p.others = map[int]map[uint32]string{}
	}
	p.others[r] = m
	if s, ok := m[id]; ok {
		return s
	}
	return fmt.Sprintf("? (rank %d has no name %d)", r, id)
}

// parseNames reads a names file; a malformed line (the file is another
// process's) is skipped.
func parseNames(b []byte) map[uint32]string {
	m := map[uint32]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		num, quoted, ok := bytes.Cut(sc.Bytes(), []byte{'\t'})
		if !ok {
			continue
		}
		id, err := strconv.ParseUint(string(num), 10, 32)
		if err != nil {
			continue
		}
		s, err := strconv.Unquote(string(quoted))
		if err != nil {
			continue
		}
		m[uint32(id)] = s
	}
	return m
}
