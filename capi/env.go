//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/internal/rmacheck"
	"github.com/shmrun/shmrun/internal/winc"
)

// The process's MPI state: Init and Finalize move it on, once each.
var env struct {
	sync.Mutex
	state  int // stateNew, stateInit, stateDone
	world  *comm.Comm
	thread C.int // the level provided
	main   int   // the OS thread that called Init (MPI_Is_thread_main)
}

const (
	stateNew = iota
	stateInit
	stateDone
)

// envState mirrors env.state for the checks every call makes (an atomic
// load, not the mutex).
var envState atomic.Int32

func initialized() bool { return envState.Load() == stateInit }

func finalized() bool { return envState.Load() == stateDone }

// worldRank is this process's world rank, -1 before Init.
func worldRank() int {
	env.Lock()
	defer env.Unlock()
	if env.world == nil {
		return -1
	}
	return env.world.Rank()
}

// abortJob ends the job with code (MPI_Abort on MPI_COMM_WORLD), or this
// process when there is no job yet.
func abortJob(code int) {
	env.Lock()
	w := env.world
	env.Unlock()
	if w != nil {
		w.Abort(code)
	}
	os.Exit(max(1, code&0xff))
}

//export shmInit
func shmInit(required C.int, provided *C.int, call *C.char) C.int {
	name := callName(call)
	env.Lock()
	if env.state != stateNew {
		st := env.state
		env.Unlock()
		what := "twice"
		if st == stateDone {
			what = "after MPI_Finalize"
		}
		return raise(name, hErrorsAreFatal, 0, fmt.Errorf("MPI initialized %s: %w", what, errNotInit))
	}
	env.Unlock()
	rmacheck.CallsFromC(callSite) // --check: this process's calls come from C: their lines are C's
	if chkOn {
		rmacheck.BeforeClock = chkFlush
		chkThreads()
	}
	w, err := comm.Init()
	if err != nil {
		return raise(name, hErrorsAreFatal, 0, err)
	}
	self := comm.Self()
	tab.Lock()
	tab.comms[hCommWorld] = &commH{h: hCommWorld, c: w, errh: hErrorsAreFatal, name: "MPI_COMM_WORLD", attr: newAttrBlock(w)}
	tab.comms[hCommSelf] = &commH{h: hCommSelf, c: self, errh: hErrorsAreFatal, name: "MPI_COMM_SELF"}
	tab.infos[hInfoEnv] = envInfo(w.Size())
	worldH.Store(tab.comms[hCommWorld])
	tab.Unlock()
	env.Lock()
	env.world, env.state, env.thread = w, stateInit, C.MPI_THREAD_MULTIPLE
	envState.Store(stateInit)
	env.main = osThread()
	env.Unlock()
	if provided != nil {
		*provided = C.MPI_THREAD_MULTIPLE
	}
	_ = required // every level is provided: the runtime is thread-safe throughout
	return C.MPI_SUCCESS
}

//export shmFinalize
func shmFinalize() C.int {
	if !initialized() {
		return notInit("MPI_Finalize")
	}
	// MPI_COMM_SELF's attributes go first, last set first, as if it were
	// freed (MPI 4.1 §11.2.4): their delete callbacks may still call MPI.
	// A callback's error fails the call, MPI still initialized.
	if self, ok := get(tab.comms, hCommSelf); ok {
		if err := deleteAll(attrComm, hCommSelf, &self.uattrs); err != nil {
			return self.raise("MPI_Finalize", err)
		}
	}
	cqFlush()
	winc.NBCDrainAll() // the nonblocking collectives' jobs use the descriptors
	dropAllCommDescs()
	dropAllWinDescs()
	chkFinalize()
	err := comm.Finalize()
	env.Lock()
	env.state = stateDone
	envState.Store(stateDone)
	env.Unlock()
	if err != nil {
		return raise("MPI_Finalize", hErrorsAreFatal, 0, err)
	}
	return C.MPI_SUCCESS
}

//export shmInitialized
func shmInitialized(flag *C.int) C.int {
	env.Lock()
	defer env.Unlock()
	*flag = cbool(env.state != stateNew)
	return C.MPI_SUCCESS
}

//export shmFinalized
func shmFinalized(flag *C.int) C.int {
	env.Lock()
	defer env.Unlock()
	*flag = cbool(env.state == stateDone)
	return C.MPI_SUCCESS
}

//export shmQueryThread
func shmQueryThread(provided *C.int) C.int {
	env.Lock()
	defer env.Unlock()
	*provided = env.thread
	return C.MPI_SUCCESS
}

//export shmIsThreadMain
func shmIsThreadMain(flag *C.int) C.int {
	env.Lock()
	defer env.Unlock()
	*flag = cbool(env.state != stateNew && env.main == osThread())
	return C.MPI_SUCCESS
}

//export shmAbort
func shmAbort(h C.uintptr_t, code C.int) C.int {
	x, ok := get(tab.comms, uintptr(h))
	if ok && x.c != nil {
		fmt.Fprintf(os.Stderr, "shmrun: MPI_Abort(%d) on rank %d\n", int(code), worldRank())
		env.Lock()
		w := env.world
		env.Unlock()
		w.Abort(int(code))
	}
	abortJob(int(code))
	return C.MPI_SUCCESS
}

//export shmWtime
func shmWtime() C.double { return C.double(comm.Wtime()) }

// shmWtick is the resolution of MPI_Wtime: the monotonic clock's.
//
//export shmWtick
func shmWtick() C.double { return C.double(float64(time.Nanosecond) / 1e9) }

//export shmGetProcessorName
func shmGetProcessorName(name *C.char, resultlen *C.int) C.int {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	*resultlen = C.int(putString(name, C.MPI_MAX_PROCESSOR_NAME, host))
	return C.MPI_SUCCESS
}

// libraryVersion is MPI_Get_library_version's string.
func libraryVersion() string {
	return fmt.Sprintf("shmrun libmpi_abi (MPI %d.%d, standard ABI %d.%d; Go %s, %s/%s)",
		C.MPI_VERSION, C.MPI_SUBVERSION, C.MPI_ABI_VERSION, C.MPI_ABI_SUBVERSION,
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

//export shmGetLibraryVersion
func shmGetLibraryVersion(version *C.char, resultlen *C.int) C.int {
	*resultlen = C.int(putString(version, C.MPI_MAX_LIBRARY_VERSION_STRING, libraryVersion()))
	return C.MPI_SUCCESS
}

//export shmErrorString
func shmErrorString(code C.int, s *C.char, resultlen *C.int) C.int {
	msg, ok := messageOf(code)
	if !ok {
		return raiseSelf("MPI_Error_string", fmt.Errorf("error code %d is no error code: %w", int(code), comm.ErrArg))
	}
	*resultlen = C.int(putString(s, C.MPI_MAX_ERROR_STRING, msg))
	return C.MPI_SUCCESS
}

//export shmErrorClass
func shmErrorClass(code C.int, class *C.int) C.int {
	c, ok := classOfCode(code)
	if !ok {
		return raiseSelf("MPI_Error_class", fmt.Errorf("error code %d is no error code: %w", int(code), comm.ErrArg))
	}
	*class = c
	return C.MPI_SUCCESS
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// envInfo is MPI_INFO_ENV: how this process was started (the standard's
// reserved keys that apply) in a job of size ranks (0: unknown, no
// maxprocs). Its command and argv are the process's command line, as the
// launcher gave it, whatever MPI_Init's arguments.
func envInfo(size int) *infoH {
	x := &infoH{vals: map[string]string{}}
	set := func(k, v string) {
		x.keys = append(x.keys, k)
		x.vals[k] = v
	}
	if len(os.Args) > 0 {
		set("command", os.Args[0])
		set("argv", strings.Join(os.Args[1:], " "))
	}
	if size > 0 {
		set("maxprocs", strconv.Itoa(size))
	}
	if host, err := os.Hostname(); err == nil {
		set("host", host)
	}
	set("arch", runtime.GOOS+"/"+runtime.GOARCH)
	if wd, err := os.Getwd(); err == nil {
		set("wdir", wd)
	}
	set("thread_level", "MPI_THREAD_MULTIPLE")
	return x
}

// jobSize is the number of ranks of this process's job: the world's
// after MPI_Init, before it what the launcher says (1 for a singleton; 0
// if the launcher's variable is unreadable, which MPI_Init will refuse).
func jobSize() int {
	env.Lock()
	w := env.world
	env.Unlock()
	if w != nil {
		return w.Size()
	}
	if os.Getenv(comm.EnvJob) == "" {
		return 1
	}
	n, err := strconv.Atoi(os.Getenv(comm.EnvSize))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// shmInfoCreateEnv is MPI_Info_create_env: a new info object with
// MPI_INFO_ENV's contents, at any time (MPI 4.1 §12.4.1), before MPI_Init
// too. MPI_INFO_ENV is made from the process's own command line, not from
// MPI_Init's arguments, so neither is this one from the call's.
//
//export shmInfoCreateEnv
func shmInfoCreateEnv(out *C.uintptr_t) C.int {
	*out = C.uintptr_t(add(tab.infos, envInfo(jobSize())))
	return C.MPI_SUCCESS
}
