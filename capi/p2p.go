//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import (
	"fmt"

	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
)

// Status: the source and tag, then the message's length in bytes in
// MPI_internal[0..1] (low, high) and the cancelled flag in [2]. MPI_ERROR
// is left as it was: only the calls that complete several requests set
// it (MPI 4.1 §3.2.5), which they do themselves.
func setStatus(s *C.MPI_Status, st *comm.Status) {
	if s == nil {
		return
	}
	n, _ := comm.GetCountType(*st, dtype.Byte)
	s.MPI_SOURCE = cRank(st.Source)
	s.MPI_TAG = cTag(st.Tag)
	setStatusBytes(s, int64(n))
	s.MPI_internal[2] = cbool(st.Cancelled)
}

// setStatusBytes sets the length in bytes status s holds.
func setStatusBytes(s *C.MPI_Status, n int64) {
	s.MPI_internal[0] = C.int(uint32(n))
	s.MPI_internal[1] = C.int(uint32(uint64(n) >> 32))
}

// emptyStatus is the status of a null or inactive request.
func emptyStatus(s *C.MPI_Status) {
	if s == nil {
		return
	}
	*s = C.MPI_Status{}
	s.MPI_SOURCE, s.MPI_TAG = C.MPI_ANY_SOURCE, C.MPI_ANY_TAG
}

func statusBytes(s *C.MPI_Status) int64 {
	return int64(uint32(s.MPI_internal[0])) | int64(uint32(s.MPI_internal[1]))<<32
}

// p2pArgs resolves a point-to-point call's communicator, datatype and
// buffer.
func p2pArgs(call string, h, dt C.uintptr_t, p *C.char, count C.int64_t) (*commH, *dtype.Type, []byte, C.int) {
	x, code := commOf(call, uintptr(h))
	if code != 0 {
		return nil, nil, nil, code
	}
	installP2PDesc(x)
	t, err := typeOf(uintptr(dt))
	if err != nil {
		return nil, nil, nil, x.raise(call, err)
	}
	b, tt, err := buf(p, int64(count), t.t)
	if err != nil {
		return nil, nil, nil, x.raise(call, err)
	}
	return x, tt, b, 0
}

// Send modes of shmSend.
const (
	modeStandard = iota
	modeSync
)

//export shmSend
func shmSend(p *C.char, count C.int64_t, dt C.uintptr_t, dest, tag C.int, h C.uintptr_t, mode C.int, call *C.char) C.int {
	name := callName(call)
	x, t, b, code := p2pArgs(name, h, dt, p, count)
	if code != 0 {
		return code
	}
	var err error
	if mode == modeSync {
		err = x.c.SsendType(b, int(count), t, goRank(dest), int(tag))
	} else {
		err = x.c.SendType(b, int(count), t, goRank(dest), int(tag))
	}
	if err != nil {
		return x.raise(name, err)
	}
	return C.MPI_SUCCESS
}

//export shmRecv
func shmRecv(p *C.char, count C.int64_t, dt C.uintptr_t, src, tag C.int, h C.uintptr_t, status *C.MPI_Status, call *C.char) C.int {
	name := callName(call)
	x, t, b, code := p2pArgs(name, h, dt, p, count)
	if code != 0 {
		return code
	}
	st, err := x.c.RecvType(b, int(count), t, goRank(src), goTag(tag))
	if err != nil {
		code := x.raise(name, err)
		setStatus(status, &st)
		return code
	}
	setStatus(status, &st)
	return C.MPI_SUCCESS
}

//export shmIsend
func shmIsend(p *C.char, count C.int64_t, dt C.uintptr_t, dest, tag C.int, h C.uintptr_t, mode C.int, req *C.uintptr_t, call *C.char) C.int {
	name := callName(call)
	x, t, b, code := p2pArgs(name, h, dt, p, count)
	if code != 0 {
		return code
	}
	var r *comm.Request
	var err error
	if mode == modeSync {
		r, err = x.c.IssendType(b, int(count), t, goRank(dest), int(tag))
	} else {
		r, err = x.c.IsendType(b, int(count), t, goRank(dest), int(tag))
	}
	if err != nil {
		return x.raise(name, err)
	}
	*req = C.uintptr_t(newReq(reqH{r: r, c: x}))
	return C.MPI_SUCCESS
}

//export shmIrecv
func shmIrecv(p *C.char, count C.int64_t, dt C.uintptr_t, src, tag C.int, h C.uintptr_t, req *C.uintptr_t, call *C.char) C.int {
	name := callName(call)
	x, t, b, code := p2pArgs(name, h, dt, p, count)
	if code != 0 {
		return code
	}
	r, err := x.c.IrecvType(b, int(count), t, goRank(src), goTag(tag))
	if err != nil {
		return x.raise(name, err)
	}
	*req = C.uintptr_t(newReq(reqH{r: r, c: x}))
	return C.MPI_SUCCESS
}

//export shmSendrecv
func shmSendrecv(sp *C.char, scount C.int64_t, sdt C.uintptr_t, dest, stag C.int,
	rp *C.char, rcount C.int64_t, rdt C.uintptr_t, src, rtag C.int, h C.uintptr_t, status *C.MPI_Status, call *C.char) C.int {
	name := callName(call)
	x, st, sb, code := p2pArgs(name, h, sdt, sp, scount)
	if code != 0 {
		return code
	}
	_, rt, rb, code := p2pArgs(name, h, rdt, rp, rcount)
	if code != 0 {
		return code
	}
	s, err := x.c.SendrecvType(sb, int(scount), st, goRank(dest), int(stag), rb, int(rcount), rt, goRank(src), goTag(rtag))
	if err != nil {
		code := x.raise(name, err)
		setStatus(status, &s)
		return code
	}
	setStatus(status, &s)
	return C.MPI_SUCCESS
}

//export shmSendrecvReplace
func shmSendrecvReplace(p *C.char, count C.int64_t, dt C.uintptr_t, dest, stag, src, rtag C.int, h C.uintptr_t, status *C.MPI_Status, call *C.char) C.int {
	name := callName(call)
	x, t, b, code := p2pArgs(name, h, dt, p, count)
	if code != 0 {
		return code
	}
	s, err := x.c.SendrecvReplaceType(b, int(count), t, goRank(dest), int(stag), goRank(src), goTag(rtag))
	if err != nil {
		code := x.raise(name, err)
		setStatus(status, &s)
		return code
	}
	setStatus(status, &s)
	return C.MPI_SUCCESS
}

//export shmProbe
func shmProbe(src, tag C.int, h C.uintptr_t, block C.int, flag *C.int, status *C.MPI_Status) C.int {
	name := "MPI_Iprobe"
	if block != 0 {
		name = "MPI_Probe"
	}
	x, code := commOf(name, uintptr(h))
	if code != 0 {
		return code
	}
	var st comm.Status
	var err error
	ok := true
	if block != 0 {
		st, err = x.c.Probe(goRank(src), goTag(tag))
	} else {
		st, ok, err = x.c.Iprobe(goRank(src), goTag(tag))
	}
	if err != nil {
		return x.raise(name, err)
	}
	if flag != nil {
		*flag = cbool(ok)
	}
	if ok {
		setStatus(status, &st)
	}
	return C.MPI_SUCCESS
}

// A msgH is a message taken by MPI_Mprobe.
type msgH struct {
	m *comm.Message
	c *commH
}

//export shmMprobe
func shmMprobe(src, tag C.int, h C.uintptr_t, block C.int, flag *C.int, msg *C.uintptr_t, status *C.MPI_Status) C.int {
	name := "MPI_Improbe"
	if block != 0 {
		name = "MPI_Mprobe"
	}
	x, code := commOf(name, uintptr(h))
	if code != 0 {
		return code
	}
	var m *comm.Message
	var st comm.Status
	var err error
	ok := true
	if block != 0 {
		m, st, err = x.c.Mprobe(goRank(src), goTag(tag))
	} else {
		m, st, ok, err = x.c.Improbe(goRank(src), goTag(tag))
	}
	if err != nil {
		return x.raise(name, err)
	}
	if flag != nil {
		*flag = cbool(ok)
	}
	if !ok {
		return C.MPI_SUCCESS
	}
	if st.Source == comm.ProcNull {
		*msg = hMessageNoProc
	} else {
		*msg = C.uintptr_t(add(tab.msgs, &msgH{m: m, c: x}))
	}
	setStatus(status, &st)
	return C.MPI_SUCCESS
}

//export shmMrecv
func shmMrecv(p *C.char, count C.int64_t, dt C.uintptr_t, msg *C.uintptr_t, block C.int, req *C.uintptr_t, status *C.MPI_Status) C.int {
	name := "MPI_Imrecv"
	if block != 0 {
		name = "MPI_Mrecv"
	}
	if !initialized() {
		return notInit(name)
	}
	if *msg == hMessageNoProc {
		*msg = hMessageNull
		st := comm.Status{Source: comm.ProcNull, Tag: comm.AnyTag}
		if block != 0 {
			setStatus(status, &st)
		} else {
			*req = C.uintptr_t(newReq(reqH{done: true, st: st}))
		}
		return C.MPI_SUCCESS
	}
	m, ok := get(tab.msgs, uintptr(*msg))
	if !ok {
		return raiseSelf(name, fmt.Errorf("an invalid message (handle %#x): %w", uintptr(*msg), comm.ErrArg))
	}
	x, t, b, code := p2pArgs(name, C.uintptr_t(m.c.h), dt, p, count)
	if code != 0 {
		return code
	}
	drop(tab.msgs, uintptr(*msg))
	*msg = hMessageNull
	if block != 0 {
		st, err := m.m.RecvType(b, int(count), t)
		if err != nil {
			code := x.raise(name, err)
			setStatus(status, &st)
			return code
		}
		setStatus(status, &st)
		return C.MPI_SUCCESS
	}
	r, err := m.m.IrecvType(b, int(count), t)
	if err != nil {
		return x.raise(name, err)
	}
	*req = C.uintptr_t(newReq(reqH{r: r, c: x}))
	return C.MPI_SUCCESS
}

//export shmIsendrecv
func shmIsendrecv(sp *C.char, scount C.int64_t, sdt C.uintptr_t, dest, stag C.int,
	rp *C.char, rcount C.int64_t, rdt C.uintptr_t, src, rtag C.int, h C.uintptr_t, req *C.uintptr_t, call *C.char) C.int {
	name := callName(call)
	x, st, sb, code := p2pArgs(name, h, sdt, sp, scount)
	if code != 0 {
		return code
	}
	_, rt, rb, code := p2pArgs(name, h, rdt, rp, rcount)
	if code != 0 {
		return code
	}
	r, err := x.c.IsendrecvType(sb, int(scount), st, goRank(dest), int(stag), rb, int(rcount), rt, goRank(src), goTag(rtag))
	if err != nil {
		return x.raise(name, err)
	}
	*req = C.uintptr_t(newReq(reqH{r: r, c: x}))
	return C.MPI_SUCCESS
}

// shmIsendrecvReplace sends a copy of the buffer's bytes (the instances'
// span, holes included, so the copy has the buffer's layout), taken at
// the call, while the message received lands in the buffer.
//
//export shmIsendrecvReplace
func shmIsendrecvReplace(p *C.char, count C.int64_t, dt C.uintptr_t, dest, stag, src, rtag C.int, h C.uintptr_t, req *C.uintptr_t, call *C.char) C.int {
	name := callName(call)
	x, t, b, code := p2pArgs(name, h, dt, p, count)
	if code != 0 {
		return code
	}
	r, err := x.c.IsendrecvReplaceType(b, int(count), t, goRank(dest), int(stag), goRank(src), goTag(rtag))
	if err != nil {
		return x.raise(name, err)
	}
	*req = C.uintptr_t(newReq(reqH{r: r, c: x}))
	return C.MPI_SUCCESS
}
