//go:build !mpi

package comm_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
)

// handleCalls lists every exported function and method of package comm with
// how to call it on a communicator handle; nil entries take no handle (or, as
// Abort, end the process) and are listed so the coverage check knows they were
// considered. want is the error a nil, zero or finalized Comm gives (nil: the
// call has no error result and gives a zero value).
func handleCalls() map[string]func(c *comm.Comm) error {
	g := func(c *comm.Comm) *comm.Group { return c.Group() }
	return map[string]func(c *comm.Comm) error{
		"Init":               nil,
		"Finalize":           nil, // process-wide; TestSingleton covers it
		"NewLocalWorld":      nil,
		"Wtime":              nil,
		"AllocMem":           nil, // no communicator: TestAllocMem
		"FreeMem":            nil,
		"Address":            nil,
		"Comm.Abort":         nil, // ends the process; the launcher tests cover it
		"Comm.AppNum":        func(c *comm.Comm) error { c.AppNum(); return nil },
		"Comm.Barrier":       func(c *comm.Comm) error { return c.Barrier() },
		"Comm.Dup":           func(c *comm.Comm) error { _, err := c.Dup(); return err },
		"Comm.Split":         func(c *comm.Comm) error { _, err := c.Split(0, 0); return err },
		"Comm.Create":        func(c *comm.Comm) error { _, err := c.Create(c.Group()); return err },
		"Comm.Free":          func(c *comm.Comm) error { return c.Free() },
		"Comm.CreateGroup":   func(c *comm.Comm) error { _, err := c.CreateGroup(c.Group(), 0); return err },
		"Comm.SplitType":     func(c *comm.Comm) error { _, err := c.SplitType(comm.TypeShared, 0, nil); return err },
		"DimsCreate":         nil, // takes no handle: TestDimsCreate
		"Comm.Topology":      func(c *comm.Comm) error { _ = c.Topology(); return nil },
		"Comm.CartCreate":    func(c *comm.Comm) error { _, err := c.CartCreate([]int{1}, []bool{false}, false); return err },
		"Comm.CartGet":       func(c *comm.Comm) error { _, _, _, err := c.CartGet(); return err },
		"Comm.CartRank":      func(c *comm.Comm) error { _, err := c.CartRank([]int{0}); return err },
		"Comm.CartCoords":    func(c *comm.Comm) error { _, err := c.CartCoords(0); return err },
		"Comm.CartShift":     func(c *comm.Comm) error { _, _, err := c.CartShift(0, 1); return err },
		"Comm.CartSub":       func(c *comm.Comm) error { _, err := c.CartSub([]bool{true}); return err },
		"Compare":            nil, // on nil communicators: TestCommCompareNil
		"Self":               nil, // TestCommunicators
		"Comm.Finalize":      func(c *comm.Comm) error { return c.Finalize() },
		"Comm.Rank":          func(c *comm.Comm) error { _ = c.Rank(); return nil },
		"Comm.Size":          func(c *comm.Comm) error { _ = c.Size(); return nil },
		"Comm.Group":         func(c *comm.Comm) error { _ = c.Group(); return nil },
		"Group.Size":         func(c *comm.Comm) error { _ = g(c).Size(); return nil },
		"Group.Rank":         func(c *comm.Comm) error { _ = g(c).Rank(); return nil },
		"Group.Compare":      func(c *comm.Comm) error { _ = g(c).Compare(g(c)); return nil },
		"Group.Incl":         func(c *comm.Comm) error { _, err := g(c).Incl(0); return err },
		"Group.Excl":         func(c *comm.Comm) error { _, err := g(c).Excl(0); return err },
		"Group.Union":        func(c *comm.Comm) error { _, err := g(c).Union(g(c)); return err },
		"Group.Intersection": func(c *comm.Comm) error { _, err := g(c).Intersection(g(c)); return err },
		"Group.Difference":   func(c *comm.Comm) error { _, err := g(c).Difference(g(c)); return err },
		"Group.RangeIncl":    func(c *comm.Comm) error { _, err := g(c).RangeIncl([3]int{0, 0, 1}); return err },
		"Group.RangeExcl":    func(c *comm.Comm) error { _, err := g(c).RangeExcl([3]int{0, 0, 1}); return err },
		"Group.TranslateRanks": func(c *comm.Comm) error {
			_, err := g(c).TranslateRanks([]int{0}, g(c))
			return err
		},
		"Comm.Ibarrier":        func(c *comm.Comm) error { _, err := c.Ibarrier(); return err },
		"Request.Wait":         func(c *comm.Comm) error { _, err := (*comm.Request)(nil).Wait(); return err },
		"Request.Test":         func(c *comm.Comm) error { _, _, err := (*comm.Request)(nil).Test(); return err },
		"Request.Cancel":       func(c *comm.Comm) error { return (*comm.Request)(nil).Cancel() },
		"Request.Start":        func(c *comm.Comm) error { return (*comm.Request)(nil).Start() },
		"Request.Free":         func(c *comm.Comm) error { return (*comm.Request)(nil).Free() },
		"Comm.SendInit":        func(c *comm.Comm) error { _, err := c.SendInit(b(), 0, 0); return err },
		"Comm.SsendInit":       func(c *comm.Comm) error { _, err := c.SsendInit(b(), 0, 0); return err },
		"Comm.RecvInit":        func(c *comm.Comm) error { _, err := c.RecvInit(b(), 0, 0); return err },
		"SendInitT":            func(c *comm.Comm) error { _, err := comm.SendInitT(c, v(), 0, 0); return err },
		"RecvInitT":            func(c *comm.Comm) error { _, err := comm.RecvInitT(c, v(), 0, 0); return err },
		"Comm.Send":            func(c *comm.Comm) error { return c.Send(b(), 0, 0) },
		"Comm.Ssend":           func(c *comm.Comm) error { return c.Ssend(b(), 0, 0) },
		"Comm.Isend":           func(c *comm.Comm) error { _, err := c.Isend(b(), 0, 0); return err },
		"Comm.Issend":          func(c *comm.Comm) error { _, err := c.Issend(b(), 0, 0); return err },
		"Comm.Recv":            func(c *comm.Comm) error { _, err := c.Recv(b(), 0, 0); return err },
		"Comm.Irecv":           func(c *comm.Comm) error { _, err := c.Irecv(b(), 0, 0); return err },
		"Comm.Sendrecv":        func(c *comm.Comm) error { _, err := c.Sendrecv(b(), 0, 0, b(), 0, 0); return err },
		"Comm.SendrecvReplace": func(c *comm.Comm) error { _, err := c.SendrecvReplace(b(), 0, 0, 0, 0); return err },
		"Comm.Probe":           func(c *comm.Comm) error { _, err := c.Probe(0, 0); return err },
		"Comm.Iprobe":          func(c *comm.Comm) error { _, _, err := c.Iprobe(0, 0); return err },
		"Comm.Mprobe":          func(c *comm.Comm) error { _, _, err := c.Mprobe(0, 0); return err },
		"Comm.Improbe":         func(c *comm.Comm) error { _, _, _, err := c.Improbe(0, 0); return err },
		"Message.Recv":         func(c *comm.Comm) error { _, err := (*comm.Message)(nil).Recv(b()); return err },
		"Message.Irecv":        func(c *comm.Comm) error { _, err := (*comm.Message)(nil).Irecv(b()); return err },
		"SendT":                func(c *comm.Comm) error { return comm.SendT(c, v(), 0, 0) },
		"SsendT":               func(c *comm.Comm) error { return comm.SsendT(c, v(), 0, 0) },
		"RecvT":                func(c *comm.Comm) error { _, err := comm.RecvT(c, v(), 0, 0); return err },
		"IsendT":               func(c *comm.Comm) error { _, err := comm.IsendT(c, v(), 0, 0); return err },
		"IrecvT":               func(c *comm.Comm) error { _, err := comm.IrecvT(c, v(), 0, 0); return err },
		"SendrecvT":            func(c *comm.Comm) error { _, err := comm.SendrecvT(c, v(), 0, 0, v(), 0, 0); return err },
		"MrecvT":               func(c *comm.Comm) error { _, err := comm.MrecvT((*comm.Message)(nil), v()); return err },
		"GetCount":             nil, // takes no handle: p2pTags
		"Waitall":              nil, // take requests: p2pExchange, p2pWaitany, p2pPersistent
		"WaitallInto":          nil,
		"Startall":             nil,
		"Waitany":              nil,
		"Waitsome":             nil,
		"Testall":              nil,
		"Testany":              nil,
		"Testsome":             nil,
		"OpCreate":             nil, // takes no handle: TestOpCreate
		"UserOp.Commutative":   func(c *comm.Comm) error { _ = (*comm.UserOp[int64])(nil).Commutative(); return nil },
		"UserOp.InUnits": func(c *comm.Comm) error {
			if _, err := (*comm.UserOp[int64])(nil).InUnits(3); !errors.Is(err, comm.ErrOp) {
				return fmt.Errorf("InUnits of a nil op: %v, want ErrOp", err)
			}
			return nil
		},
		"Bcast":                     func(c *comm.Comm) error { return comm.Bcast(c, v(), 0) },
		"Reduce":                    func(c *comm.Comm) error { return comm.Reduce(c, v(), v(), atomics.Sum, 0) },
		"ReduceInPlace":             func(c *comm.Comm) error { return comm.ReduceInPlace(c, v(), atomics.Sum, 0) },
		"Allreduce":                 func(c *comm.Comm) error { return comm.Allreduce(c, v(), v(), atomics.Sum) },
		"AllreduceInPlace":          func(c *comm.Comm) error { return comm.AllreduceInPlace(c, v(), atomics.Sum) },
		"Gather":                    func(c *comm.Comm) error { return comm.Gather(c, v(), v(), 0) },
		"GatherInPlace":             func(c *comm.Comm) error { return comm.GatherInPlace(c, v(), 0) },
		"Gatherv":                   func(c *comm.Comm) error { return comm.Gatherv(c, v(), v(), one, zero, 0) },
		"GathervInPlace":            func(c *comm.Comm) error { return comm.GathervInPlace(c, v(), one, zero, 0) },
		"Scatter":                   func(c *comm.Comm) error { return comm.Scatter(c, v(), v(), 0) },
		"ScatterInPlace":            func(c *comm.Comm) error { return comm.ScatterInPlace(c, v(), 0) },
		"Scatterv":                  func(c *comm.Comm) error { return comm.Scatterv(c, v(), one, zero, v(), 0) },
		"ScattervInPlace":           func(c *comm.Comm) error { return comm.ScattervInPlace(c, v(), one, zero, 0) },
		"Allgather":                 func(c *comm.Comm) error { return comm.Allgather(c, v(), v()) },
		"AllgatherInPlace":          func(c *comm.Comm) error { return comm.AllgatherInPlace(c, v()) },
		"Allgatherv":                func(c *comm.Comm) error { return comm.Allgatherv(c, v(), v(), one, zero) },
		"AllgathervInPlace":         func(c *comm.Comm) error { return comm.AllgathervInPlace(c, v(), one, zero) },
		"Alltoall":                  func(c *comm.Comm) error { return comm.Alltoall(c, v(), v()) },
		"AlltoallInPlace":           func(c *comm.Comm) error { return comm.AlltoallInPlace(c, v()) },
		"Alltoallv":                 func(c *comm.Comm) error { return comm.Alltoallv(c, v(), one, zero, v(), one, zero) },
		"AlltoallvInPlace":          func(c *comm.Comm) error { return comm.AlltoallvInPlace(c, v(), one, zero) },
		"ReduceScatterBlock":        func(c *comm.Comm) error { return comm.ReduceScatterBlock(c, v(), v(), atomics.Sum) },
		"ReduceScatterBlockInPlace": func(c *comm.Comm) error { return comm.ReduceScatterBlockInPlace(c, v(), atomics.Sum) },
		"Scan":                      func(c *comm.Comm) error { return comm.Scan(c, v(), v(), atomics.Sum) },
		"ScanInPlace":               func(c *comm.Comm) error { return comm.ScanInPlace(c, v(), atomics.Sum) },
		"Exscan":                    func(c *comm.Comm) error { return comm.Exscan(c, v(), v(), atomics.Sum) },
		"ExscanInPlace":             func(c *comm.Comm) error { return comm.ExscanInPlace(c, v(), atomics.Sum) },

		"Comm.SendType":   func(c *comm.Comm) error { return c.SendType(b8(), 1, f64(), 0, 0) },
		"Comm.SsendType":  func(c *comm.Comm) error { return c.SsendType(b8(), 1, f64(), 0, 0) },
		"Comm.IsendType":  func(c *comm.Comm) error { _, err := c.IsendType(b8(), 1, f64(), 0, 0); return err },
		"Comm.IssendType": func(c *comm.Comm) error { _, err := c.IssendType(b8(), 1, f64(), 0, 0); return err },
		"Comm.RecvType":   func(c *comm.Comm) error { _, err := c.RecvType(b8(), 1, f64(), 0, 0); return err },
		"Comm.IrecvType":  func(c *comm.Comm) error { _, err := c.IrecvType(b8(), 1, f64(), 0, 0); return err },
		"Comm.SendInitType": func(c *comm.Comm) error {
			_, err := c.SendInitType(b8(), 1, f64(), 0, 0)
			return err
		},
		"Comm.SsendInitType": func(c *comm.Comm) error {
			_, err := c.SsendInitType(b8(), 1, f64(), 0, 0)
			return err
		},
		"Comm.RecvInitType": func(c *comm.Comm) error {
			_, err := c.RecvInitType(b8(), 1, f64(), 0, 0)
			return err
		},
		"Comm.SendrecvType": func(c *comm.Comm) error {
			_, err := c.SendrecvType(b8(), 1, f64(), 0, 0, b8(), 1, f64(), 0, 0)
			return err
		},
		"Comm.SendrecvReplaceType": func(c *comm.Comm) error { _, err := c.SendrecvReplaceType(b8(), 1, f64(), 0, 0, 0, 0); return err },
		"Comm.Isendrecv":           func(c *comm.Comm) error { _, err := c.Isendrecv(b(), 0, 0, b(), 0, 0); return err },
		"Comm.IsendrecvReplace":    func(c *comm.Comm) error { _, err := c.IsendrecvReplace(b(), 0, 0, 0, 0); return err },
		"IsendrecvT":               func(c *comm.Comm) error { _, err := comm.IsendrecvT(c, v(), 0, 0, v(), 0, 0); return err },
		"Comm.IsendrecvType": func(c *comm.Comm) error {
			_, err := c.IsendrecvType(b8(), 1, f64(), 0, 0, b8(), 1, f64(), 0, 0)
			return err
		},
		"Comm.IsendrecvReplaceType": func(c *comm.Comm) error { _, err := c.IsendrecvReplaceType(b8(), 1, f64(), 0, 0, 0, 0); return err },
		"Message.RecvType":          func(c *comm.Comm) error { _, err := (*comm.Message)(nil).RecvType(b8(), 1, f64()); return err },
		"Message.IrecvType":         func(c *comm.Comm) error { _, err := (*comm.Message)(nil).IrecvType(b8(), 1, f64()); return err },
		"GetCountType":              nil, // takes no handle: p2pTyped
		"GetElements":               nil,
		"BcastType":                 func(c *comm.Comm) error { return comm.BcastType(c, b8(), 1, f64(), 0) },
		"GatherType":                func(c *comm.Comm) error { return comm.GatherType(c, b8(), 1, f64(), b8(), 1, f64(), 0) },
		"GatherTypeInPlace":         func(c *comm.Comm) error { return comm.GatherTypeInPlace(c, b8(), 1, f64(), 0) },
		"GathervType":               func(c *comm.Comm) error { return comm.GathervType(c, b8(), 1, f64(), b8(), one, zero, f64(), 0) },
		"ScatterType":               func(c *comm.Comm) error { return comm.ScatterType(c, b8(), 1, f64(), b8(), 1, f64(), 0) },
		"ScatterTypeInPlace":        func(c *comm.Comm) error { return comm.ScatterTypeInPlace(c, b8(), 1, f64(), 0) },
		"ScattervType":              func(c *comm.Comm) error { return comm.ScattervType(c, b8(), one, zero, f64(), b8(), 1, f64(), 0) },
		"AllgatherType":             func(c *comm.Comm) error { return comm.AllgatherType(c, b8(), 1, f64(), b8(), 1, f64()) },
		"AllgatherTypeInPlace":      func(c *comm.Comm) error { return comm.AllgatherTypeInPlace(c, b8(), 1, f64()) },
		"AllgathervType":            func(c *comm.Comm) error { return comm.AllgathervType(c, b8(), 1, f64(), b8(), one, zero, f64()) },
		"AlltoallType":              func(c *comm.Comm) error { return comm.AlltoallType(c, b8(), 1, f64(), b8(), 1, f64()) },
		"AlltoallTypeInPlace":       func(c *comm.Comm) error { return comm.AlltoallTypeInPlace(c, b8(), 1, f64()) },
		"AlltoallvType":             func(c *comm.Comm) error { return comm.AlltoallvType(c, b8(), one, zero, f64(), b8(), one, zero, f64()) },
		"ReduceType":                func(c *comm.Comm) error { return comm.ReduceType[float64](c, b8(), b8(), 1, f64(), atomics.Sum, 0) },
		"ReduceTypeInPlace":         func(c *comm.Comm) error { return comm.ReduceTypeInPlace[float64](c, b8(), 1, f64(), atomics.Sum, 0) },
		"AllreduceType":             func(c *comm.Comm) error { return comm.AllreduceType[float64](c, b8(), b8(), 1, f64(), atomics.Sum) },
		"AllreduceTypeInPlace":      func(c *comm.Comm) error { return comm.AllreduceTypeInPlace[float64](c, b8(), 1, f64(), atomics.Sum) },
		"ReduceScatterBlockType": func(c *comm.Comm) error {
			return comm.ReduceScatterBlockType[float64](c, b8(), b8(), 1, f64(), atomics.Sum)
		},
		"ScanType":              func(c *comm.Comm) error { return comm.ScanType[float64](c, b8(), b8(), 1, f64(), atomics.Sum) },
		"ExscanType":            func(c *comm.Comm) error { return comm.ExscanType[float64](c, b8(), b8(), 1, f64(), atomics.Sum) },
		"GathervTypeInPlace":    func(c *comm.Comm) error { return comm.GathervTypeInPlace(c, b8(), 1, one, zero, f64(), 0) },
		"ScattervTypeInPlace":   func(c *comm.Comm) error { return comm.ScattervTypeInPlace(c, b8(), 1, one, zero, f64(), 0) },
		"AllgathervTypeInPlace": func(c *comm.Comm) error { return comm.AllgathervTypeInPlace(c, b8(), one, zero, f64()) },
		"AlltoallvTypeInPlace":  func(c *comm.Comm) error { return comm.AlltoallvTypeInPlace(c, b8(), one, zero, f64()) },
		"AlltoallwType": func(c *comm.Comm) error {
			return comm.AlltoallwType(c, b8(), one, zero, []*dtype.Type{f64()}, b8(), one, zero, []*dtype.Type{f64()})
		},
		"AlltoallwTypeInPlace": func(c *comm.Comm) error { return comm.AlltoallwTypeInPlace(c, b8(), one, zero, []*dtype.Type{f64()}) },
		"ReduceScatterBlockTypeInPlace": func(c *comm.Comm) error {
			return comm.ReduceScatterBlockTypeInPlace[float64](c, b8(), 1, f64(), atomics.Sum)
		},
		"Ibcast":                     func(c *comm.Comm) error { _, err := comm.Ibcast(c, v(), 0); return err },
		"Ireduce":                    func(c *comm.Comm) error { _, err := comm.Ireduce(c, v(), v(), atomics.Sum, 0); return err },
		"IreduceInPlace":             func(c *comm.Comm) error { _, err := comm.IreduceInPlace(c, v(), atomics.Sum, 0); return err },
		"Iallreduce":                 func(c *comm.Comm) error { _, err := comm.Iallreduce(c, v(), v(), atomics.Sum); return err },
		"IallreduceInPlace":          func(c *comm.Comm) error { _, err := comm.IallreduceInPlace(c, v(), atomics.Sum); return err },
		"Igather":                    func(c *comm.Comm) error { _, err := comm.Igather(c, v(), v(), 0); return err },
		"IgatherInPlace":             func(c *comm.Comm) error { _, err := comm.IgatherInPlace(c, v(), 0); return err },
		"Igatherv":                   func(c *comm.Comm) error { _, err := comm.Igatherv(c, v(), v(), one, zero, 0); return err },
		"IgathervInPlace":            func(c *comm.Comm) error { _, err := comm.IgathervInPlace(c, v(), one, zero, 0); return err },
		"Iscatter":                   func(c *comm.Comm) error { _, err := comm.Iscatter(c, v(), v(), 0); return err },
		"IscatterInPlace":            func(c *comm.Comm) error { _, err := comm.IscatterInPlace(c, v(), 0); return err },
		"Iscatterv":                  func(c *comm.Comm) error { _, err := comm.Iscatterv(c, v(), one, zero, v(), 0); return err },
		"IscattervInPlace":           func(c *comm.Comm) error { _, err := comm.IscattervInPlace(c, v(), one, zero, 0); return err },
		"Iallgather":                 func(c *comm.Comm) error { _, err := comm.Iallgather(c, v(), v()); return err },
		"IallgatherInPlace":          func(c *comm.Comm) error { _, err := comm.IallgatherInPlace(c, v()); return err },
		"Iallgatherv":                func(c *comm.Comm) error { _, err := comm.Iallgatherv(c, v(), v(), one, zero); return err },
		"IallgathervInPlace":         func(c *comm.Comm) error { _, err := comm.IallgathervInPlace(c, v(), one, zero); return err },
		"Ialltoall":                  func(c *comm.Comm) error { _, err := comm.Ialltoall(c, v(), v()); return err },
		"IalltoallInPlace":           func(c *comm.Comm) error { _, err := comm.IalltoallInPlace(c, v()); return err },
		"Ialltoallv":                 func(c *comm.Comm) error { _, err := comm.Ialltoallv(c, v(), one, zero, v(), one, zero); return err },
		"IalltoallvInPlace":          func(c *comm.Comm) error { _, err := comm.IalltoallvInPlace(c, v(), one, zero); return err },
		"IreduceScatterBlock":        func(c *comm.Comm) error { _, err := comm.IreduceScatterBlock(c, v(), v(), atomics.Sum); return err },
		"IreduceScatterBlockInPlace": func(c *comm.Comm) error { _, err := comm.IreduceScatterBlockInPlace(c, v(), atomics.Sum); return err },
		"Iscan":                      func(c *comm.Comm) error { _, err := comm.Iscan(c, v(), v(), atomics.Sum); return err },
		"IscanInPlace":               func(c *comm.Comm) error { _, err := comm.IscanInPlace(c, v(), atomics.Sum); return err },
		"Iexscan":                    func(c *comm.Comm) error { _, err := comm.Iexscan(c, v(), v(), atomics.Sum); return err },
		"IexscanInPlace":             func(c *comm.Comm) error { _, err := comm.IexscanInPlace(c, v(), atomics.Sum); return err },
		"BcastInit":                  func(c *comm.Comm) error { _, err := comm.BcastInit(c, v(), 0); return err },
		"ReduceInit":                 func(c *comm.Comm) error { _, err := comm.ReduceInit(c, v(), v(), atomics.Sum, 0); return err },
		"ReduceInitInPlace":          func(c *comm.Comm) error { _, err := comm.ReduceInitInPlace(c, v(), atomics.Sum, 0); return err },
		"AllreduceInit":              func(c *comm.Comm) error { _, err := comm.AllreduceInit(c, v(), v(), atomics.Sum); return err },
		"AllreduceInitInPlace":       func(c *comm.Comm) error { _, err := comm.AllreduceInitInPlace(c, v(), atomics.Sum); return err },
		"GatherInit":                 func(c *comm.Comm) error { _, err := comm.GatherInit(c, v(), v(), 0); return err },
		"GatherInitInPlace":          func(c *comm.Comm) error { _, err := comm.GatherInitInPlace(c, v(), 0); return err },
		"GathervInit":                func(c *comm.Comm) error { _, err := comm.GathervInit(c, v(), v(), one, zero, 0); return err },
		"GathervInitInPlace":         func(c *comm.Comm) error { _, err := comm.GathervInitInPlace(c, v(), one, zero, 0); return err },
		"ScatterInit":                func(c *comm.Comm) error { _, err := comm.ScatterInit(c, v(), v(), 0); return err },
		"ScatterInitInPlace":         func(c *comm.Comm) error { _, err := comm.ScatterInitInPlace(c, v(), 0); return err },
		"ScattervInit":               func(c *comm.Comm) error { _, err := comm.ScattervInit(c, v(), one, zero, v(), 0); return err },
		"ScattervInitInPlace":        func(c *comm.Comm) error { _, err := comm.ScattervInitInPlace(c, v(), one, zero, 0); return err },
		"AllgatherInit":              func(c *comm.Comm) error { _, err := comm.AllgatherInit(c, v(), v()); return err },
		"AllgatherInitInPlace":       func(c *comm.Comm) error { _, err := comm.AllgatherInitInPlace(c, v()); return err },
		"AllgathervInit":             func(c *comm.Comm) error { _, err := comm.AllgathervInit(c, v(), v(), one, zero); return err },
		"AllgathervInitInPlace":      func(c *comm.Comm) error { _, err := comm.AllgathervInitInPlace(c, v(), one, zero); return err },
		"AlltoallInit":               func(c *comm.Comm) error { _, err := comm.AlltoallInit(c, v(), v()); return err },
		"AlltoallInitInPlace":        func(c *comm.Comm) error { _, err := comm.AlltoallInitInPlace(c, v()); return err },
		"AlltoallvInit":              func(c *comm.Comm) error { _, err := comm.AlltoallvInit(c, v(), one, zero, v(), one, zero); return err },
		"AlltoallvInitInPlace":       func(c *comm.Comm) error { _, err := comm.AlltoallvInitInPlace(c, v(), one, zero); return err },
		"ReduceScatterBlockInit":     func(c *comm.Comm) error { _, err := comm.ReduceScatterBlockInit(c, v(), v(), atomics.Sum); return err },
		"ReduceScatterBlockInitInPlace": func(c *comm.Comm) error {
			_, err := comm.ReduceScatterBlockInitInPlace(c, v(), atomics.Sum)
			return err
		},
		"ScanInit":          func(c *comm.Comm) error { _, err := comm.ScanInit(c, v(), v(), atomics.Sum); return err },
		"ScanInitInPlace":   func(c *comm.Comm) error { _, err := comm.ScanInitInPlace(c, v(), atomics.Sum); return err },
		"ExscanInit":        func(c *comm.Comm) error { _, err := comm.ExscanInit(c, v(), v(), atomics.Sum); return err },
		"ExscanInitInPlace": func(c *comm.Comm) error { _, err := comm.ExscanInitInPlace(c, v(), atomics.Sum); return err },
		"Comm.BarrierInit":  func(c *comm.Comm) error { _, err := c.BarrierInit(); return err },
		"ScanTypeInPlace":   func(c *comm.Comm) error { return comm.ScanTypeInPlace[float64](c, b8(), 1, f64(), atomics.Sum) },
		"ExscanTypeInPlace": func(c *comm.Comm) error { return comm.ExscanTypeInPlace[float64](c, b8(), 1, f64(), atomics.Sum) },
	}
}

// v, one and zero are the buffers and the counts and displacements of one
// rank that the handle tests pass to the collectives.
func v() []float64 { return []float64{1} }

func b() []byte { return []byte{1} }

// b8 is one float64's bytes, and f64 its type, for the typed forms.
func b8() []byte { return make([]byte, 8) }

func f64() *dtype.Type { return dtype.Basic(atomics.Float64) }

var one, zero = []int{1}, []int{0}

// handleColls are the calls that must fail with the handle's own error.
var handleColls = []string{"Comm.CartCreate", "Comm.CartGet", "Comm.CartRank", "Comm.CartCoords", "Comm.CartShift", "Comm.CartSub", "Comm.Barrier", "Comm.Finalize", "Comm.Dup", "Comm.Split", "Comm.Create", "Comm.Free", "Comm.CreateGroup", "Comm.SplitType",
	"Comm.Ibarrier", "Bcast", "Reduce", "ReduceInPlace", "Allreduce", "AllreduceInPlace", "Gather", "GatherInPlace", "Gatherv", "GathervInPlace",
	"Scatter", "ScatterInPlace", "Scatterv", "ScattervInPlace", "Allgather", "AllgatherInPlace", "Allgatherv", "AllgathervInPlace",
	"Alltoall", "AlltoallInPlace", "Alltoallv", "AlltoallvInPlace", "ReduceScatterBlock", "ReduceScatterBlockInPlace",
	"Scan", "ScanInPlace", "Exscan", "ExscanInPlace",
	"Comm.Send", "Comm.Ssend", "Comm.Isend", "Comm.Issend", "Comm.Recv", "Comm.Irecv", "Comm.Sendrecv", "Comm.SendrecvReplace",
	"Comm.Probe", "Comm.Iprobe", "Comm.Mprobe", "Comm.Improbe", "SendT", "SsendT", "RecvT", "IsendT", "IrecvT", "SendrecvT",
	"Comm.SendType", "Comm.SsendType", "Comm.IsendType", "Comm.IssendType", "Comm.RecvType", "Comm.IrecvType", "Comm.SendrecvType",
	"Comm.SendrecvReplaceType", "Comm.Isendrecv", "Comm.IsendrecvReplace", "IsendrecvT", "Comm.IsendrecvType", "Comm.IsendrecvReplaceType", "BcastType", "GatherType", "GatherTypeInPlace", "GathervType", "ScatterType", "ScatterTypeInPlace",
	"ScattervType", "AllgatherType", "AllgatherTypeInPlace", "AllgathervType", "AlltoallType", "AlltoallTypeInPlace", "AlltoallvType",
	"ReduceType", "ReduceTypeInPlace", "AllreduceType", "AllreduceTypeInPlace", "ReduceScatterBlockType", "ScanType", "ExscanType",
	"GathervTypeInPlace", "ScattervTypeInPlace", "AllgathervTypeInPlace", "AlltoallvTypeInPlace", "AlltoallwType", "AlltoallwTypeInPlace",
	"ReduceScatterBlockTypeInPlace", "ScanTypeInPlace", "ExscanTypeInPlace", "Comm.SendInit", "Comm.SsendInit", "Comm.RecvInit", "SendInitT", "RecvInitT",
	"Comm.SendInitType", "Comm.SsendInitType", "Comm.RecvInitType",
	"Ibcast", "Ireduce", "IreduceInPlace", "Iallreduce", "IallreduceInPlace", "Igather", "IgatherInPlace", "Igatherv", "IgathervInPlace", "Iscatter", "IscatterInPlace", "Iscatterv", "IscattervInPlace", "Iallgather", "IallgatherInPlace", "Iallgatherv", "IallgathervInPlace", "Ialltoall", "IalltoallInPlace", "Ialltoallv", "IalltoallvInPlace", "IreduceScatterBlock", "IreduceScatterBlockInPlace", "Iscan", "IscanInPlace", "Iexscan", "IexscanInPlace",
	"BcastInit", "ReduceInit", "ReduceInitInPlace", "AllreduceInit", "AllreduceInitInPlace", "GatherInit", "GatherInitInPlace", "GathervInit", "GathervInitInPlace", "ScatterInit", "ScatterInitInPlace", "ScattervInit", "ScattervInitInPlace", "AllgatherInit", "AllgatherInitInPlace", "AllgathervInit", "AllgathervInitInPlace", "AlltoallInit", "AlltoallInitInPlace", "AlltoallvInit", "AlltoallvInitInPlace", "ReduceScatterBlockInit", "ReduceScatterBlockInitInPlace", "ScanInit", "ScanInitInPlace", "ExscanInit", "ExscanInitInPlace", "Comm.BarrierInit"}

func TestHandleCallsCoverAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks package comm from source")
	}
	ranktest.CheckCovers(t, ".", slices.Collect(maps.Keys(handleCalls())))
}

// Every call on a nil, a zero and a finalized communicator (and on the
// groups they give) returns an error of the right class or a zero value,
// never panics.
func TestHandleCalls(t *testing.T) {
	cs, err := comm.NewLocalWorld(1)
	if err != nil {
		t.Fatal(err)
	}
	finalized := cs[0]
	if err := finalized.Finalize(); err != nil {
		t.Fatal(err)
	}
	handles := []struct {
		what string
		c    *comm.Comm
		want error // of the calls with an error result on the Comm itself
	}{{"nil", nil, comm.ErrComm}, {"zero", &comm.Comm{}, comm.ErrComm}, {"finalized", finalized, comm.ErrFinalized}}
	for name, call := range handleCalls() {
		if call == nil {
			continue
		}
		for _, h := range handles {
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return call(h.c)
			}()
			switch {
			case err != nil && strings.HasPrefix(err.Error(), "panic"):
				t.Errorf("%s on a %s communicator: %v", name, h.what, err)
			case slices.Contains(handleColls, name):
				if !errors.Is(err, h.want) {
					t.Errorf("%s on a %s communicator = %v, want %v", name, h.what, err, h.want)
				}
			case h.c == finalized:
				// A finalized world's group is still a valid local object.
			case (name == "Group.Incl" || name == "Group.Excl" || name == "Group.TranslateRanks" ||
				name == "Group.RangeIncl" || name == "Group.RangeExcl") && !errors.Is(err, comm.ErrRank):
				// Its group is the empty group: rank 0 is outside it.
				t.Errorf("%s on the group of a %s communicator = %v, want ErrRank", name, h.what, err)
			}
		}
	}
	for _, c := range []*comm.Comm{nil, {}} {
		if c.Rank() != 0 || c.Size() != 0 || c.Group().Size() != 0 || c.Group().Rank() != comm.Undefined {
			t.Errorf("a nil or zero Comm's Rank, Size or Group is not the zero value")
		}
		if n, ok := c.AppNum(); n != 0 || ok {
			t.Errorf("a nil or zero Comm's AppNum: %d, %v; want 0, false", n, ok)
		}
	}
	var nilGroup *comm.Group
	if nilGroup.Size() != 0 || nilGroup.Rank() != comm.Undefined || nilGroup.Compare(nilGroup) != comm.Unequal {
		t.Error("a nil Group's Size, Rank or Compare is not the zero value")
	}
	if _, err := nilGroup.Incl(); !errors.Is(err, comm.ErrGroup) {
		t.Errorf("Incl on a nil group = %v, want ErrGroup", err)
	}
	if _, err := nilGroup.Excl(); !errors.Is(err, comm.ErrGroup) {
		t.Errorf("Excl on a nil group = %v, want ErrGroup", err)
	}
	if _, err := nilGroup.TranslateRanks(nil, cs[0].Group()); !errors.Is(err, comm.ErrGroup) {
		t.Errorf("TranslateRanks on a nil group = %v, want ErrGroup", err)
	}
	// The zero Request is MPI_REQUEST_NULL: complete, with the empty
	// status (MPI 4.1 §3.7.3: source AnySource, tag AnyTag, count 0).
	empty := comm.Status{Source: comm.AnySource, Tag: comm.AnyTag}
	var zero comm.Request
	if st, err := zero.Wait(); st != empty || err != nil {
		t.Errorf("Wait on the zero Request = %+v, %v", st, err)
	}
	if st, ok, err := zero.Test(); !ok || st != empty || err != nil {
		t.Errorf("Test on the zero Request = %+v, %v, %v", st, ok, err)
	}
	if err := zero.Cancel(); err != nil {
		t.Errorf("Cancel on the zero Request = %v", err)
	}
	if sts, err := comm.Waitall([]*comm.Request{&zero, nil}); err != nil || len(sts) != 2 || sts[0] != empty || sts[1] != empty {
		t.Errorf("Waitall of the zero Request = %v, %v", sts, err)
	}
}
