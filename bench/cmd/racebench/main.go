// Command racebench runs the MPI RMA cases of RMARaceBench (a public
// corpus of labelled racy and race-free programs; not part of this
// repository: give its checkout) under shmrun --check, built with shmcc
// --check, and scores the verdicts: precision and recall over the cases,
// and whether each report names the case's labelled line pair.
//
//	go run ./bench/cmd/racebench -bin DIR/bin RMARaceBench/MPIRMA
//
// DIR is a shmrun installation (go run ./cmd/shmrun-install DIR).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	nprocsRE = regexp.MustCompile(`"NPROCS":\s*(\d+)`)
	pairRE   = regexp.MustCompile(`"RACE_PAIR":\s*\[([^\]]*)\]`)
	atRE     = regexp.MustCompile(`@(\d+)`)
)

type outcome struct {
	name          string
	racy, flagged bool
	pairOK        bool   // a racy case: some report names both labelled lines
	note          string // a build or run failure
}

func main() {
	bin := flag.String("bin", "", "the bin directory of a shmrun installation (shmcc, shmrun)")
	timeout := flag.Duration("timeout", time.Minute, "per case")
	verbose := flag.Bool("v", false, "print every case")
	flag.Parse()
	if *bin == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: racebench -bin DIR/bin RMARaceBench/MPIRMA")
		os.Exit(2)
	}
	var files []string
	_ = filepath.WalkDir(flag.Arg(0), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".c") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	if len(files) == 0 {
		fmt.Fprintln(os.Stderr, "racebench: no .c files under", flag.Arg(0))
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "racebench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "racebench:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(tmp)
	var all []outcome
	for _, f := range files {
		o := runCase(*bin, tmp, f, *timeout)
		all = append(all, o)
		if *verbose || o.note != "" || o.racy != o.flagged || (o.racy && !o.pairOK) {
			fmt.Printf("%-70s racy=%-5v flagged=%-5v pair=%-5v %s\n", o.name, o.racy, o.flagged, o.pairOK, o.note)
		}
	}
	var tp, fp, tn, fn, pairs, failed int
	for _, o := range all {
		switch {
		case o.note != "":
			failed++
		case o.racy && o.flagged:
			tp++
			if o.pairOK {
				pairs++
			}
		case o.racy:
			fn++
		case o.flagged:
			fp++
		default:
			tn++
		}
	}
	prec, rec := ratio(tp, tp+fp), ratio(tp, tp+fn)
	fmt.Printf("\n%d cases: TP %d, FP %d, TN %d, FN %d, not run %d\n", len(all), tp, fp, tn, fn, failed)
	fmt.Printf("precision %.2f, recall %.2f; %d of %d true positives name the labelled line pair\n", prec, rec, pairs, tp)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func runCase(bin, tmp, src string, timeout time.Duration) outcome {
	name := filepath.Base(filepath.Dir(src)) + "/" + filepath.Base(src)
	o := outcome{name: name, racy: strings.HasSuffix(src, "-yes.c")}
	text, err := os.ReadFile(src)
	if err != nil {
		o.note = err.Error()
		return o
	}
	n := 2
	if m := nprocsRE.FindSubmatch(text); m != nil {
		n, _ = strconv.Atoi(string(m[1]))
	}
	var want []string
	if m := pairRE.FindSubmatch(text); m != nil {
		for _, a := range atRE.FindAllSubmatch(m[1], -1) {
			want = append(want, string(a[1]))
		}
	}
	exe := filepath.Join(tmp, strings.TrimSuffix(filepath.Base(src), ".c"))
	if out, err := exec.Command(filepath.Join(bin, "shmcc"), "--check", "-O1", "-fopenmp", "-o", exe, src).CombinedOutput(); err != nil {
		o.note = "build: " + firstLine(out)
		return o
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "shmrun"), "--check=warn", "--oversubscribe", "-n", strconv.Itoa(n), exe)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=2")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		o.note = fmt.Sprintf("run: %v: %s", err, lastLines(out.Bytes()))
	}
	base := regexp.QuoteMeta(filepath.Base(src))
	lineRE := regexp.MustCompile(base + `:(\d+)`)
	for _, l := range strings.Split(out.String(), "\n") {
		if !strings.Contains(l, "are not ordered by any synchronization") && !strings.Contains(l, "before the call completes") {
			continue
		}
		o.flagged = true
		got := map[string]bool{}
		for _, m := range lineRE.FindAllStringSubmatch(l, -1) {
			got[m[1]] = true
		}
		ok := len(want) > 0
		for _, w := range want {
			ok = ok && got[w]
		}
		o.pairOK = o.pairOK || ok
	}
	return o
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

func lastLines(b []byte) string {
	ls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(ls) > 2 {
		ls = ls[len(ls)-2:]
	}
	return strings.Join(ls, " | ")
}
