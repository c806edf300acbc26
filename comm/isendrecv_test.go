package comm_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/shmrun/shmrun/atomics"
	"github.com/shmrun/shmrun/comm"
	"github.com/shmrun/shmrun/dtype"
	"github.com/shmrun/shmrun/internal/ranktest"
)

func init() { ranktest.Register("be_isendrecv", beIsendrecv) }

// beIsendrecv: every form of Isendrecv on a ring (to the next rank, from
// the one before; with one rank, to itself), completed by WaitallInto,
// Waitany and Testsome in turn; a message larger than any eager path
// both ways at once; ProcNull; a wrong destination refused before any
// receive is posted.
func beIsendrecv(c *comm.Comm) error {
	r, n := c.Rank(), c.Size()
	next, prev := (r+1)%n, (r+n-1)%n
	i32 := dtype.Basic(atomics.Int32)
	every2, err := dtype.Vector(3, 1, 2, i32) // ints 0, 2, 4 of 5
	if err == nil {
		err = every2.Commit()
	}
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	for round := range 3 {
		tag := 10 * round
		// IsendrecvT of int64s.
		tIn := []int64{-1, -1}
		q0, err := comm.IsendrecvT(c, []int64{int64(r), int64(round)}, next, tag, tIn, prev, tag)
		if err != nil {
			return err
		}
		// Isendrecv of bytes.
		bIn := make([]byte, 8)
		bOut := le.AppendUint32(le.AppendUint32(nil, uint32(r)), uint32(round))
		q1, err := c.Isendrecv(bOut, next, tag+1, bIn, prev, tag+1)
		if err != nil {
			return err
		}
		// IsendrecvReplace: the buffer is sent as it was at the call.
		rep := le.AppendUint32(le.AppendUint32(nil, uint32(r+100)), uint32(round))
		q2, err := c.IsendrecvReplace(rep, next, tag+2, prev, tag+2)
		if err != nil {
			return err
		}
		// IsendrecvType: every other int32 sent, three contiguous received.
		strided := []int32{int32(r), -9, int32(round), -9, int32(r + round), -9}
		tyIn := make([]int32, 3)
		q3, err := c.IsendrecvType(i32bytes(strided), 1, every2, next, tag+3, i32bytes(tyIn), 3, i32, prev, tag+3)
		if err != nil {
			return err
		}
		// IsendrecvReplaceType: the holes keep their values.
		holes := []int32{int32(r), -7, int32(round), -7, int32(2 * r), -7}
		q4, err := c.IsendrecvReplaceType(i32bytes(holes), 1, every2, next, tag+4, prev, tag+4)
		if err != nil {
			return err
		}
		reqs := []*comm.Request{q0, q1, q2, q3, q4}
		sts := make([]comm.Status, len(reqs))
		switch round {
		case 0:
			if err := comm.WaitallInto(reqs, sts); err != nil {
				return err
			}
		case 1:
			for range reqs {
				i, st, err := comm.Waitany(reqs)
				if err != nil {
					return err
				}
				sts[i] = st
			}
		case 2:
			for left := len(reqs); left > 0; {
				idx, got, err := comm.Testsome(reqs)
				if err != nil {
					return err
				}
				for j, i := range idx {
					sts[i] = got[j]
				}
				left -= len(idx)
			}
		}
		checks := []struct {
			what      string
			got, want any
		}{
			{"IsendrecvT data", tIn, []int64{int64(prev), int64(round)}},
			{"IsendrecvT status", fmt.Sprint(sts[0].Source, sts[0].Tag, sts[0].Count), fmt.Sprint(prev, tag, 2)},
			{"Isendrecv data", bIn, le.AppendUint32(le.AppendUint32(nil, uint32(prev)), uint32(round))},
			{"Isendrecv status", fmt.Sprint(sts[1].Source, sts[1].Tag, sts[1].Count), fmt.Sprint(prev, tag+1, 8)},
			{"IsendrecvReplace data", rep, le.AppendUint32(le.AppendUint32(nil, uint32(prev+100)), uint32(round))},
			{"IsendrecvType data", tyIn, []int32{int32(prev), int32(round), int32(prev + round)}},
			{"IsendrecvType status", fmt.Sprint(sts[3].Source, sts[3].Count), fmt.Sprint(prev, 3)},
			{"IsendrecvReplaceType data", holes, []int32{int32(prev), -7, int32(round), -7, int32(2 * prev), -7}},
			{"IsendrecvReplaceType status", fmt.Sprint(sts[4].Source, sts[4].Tag, sts[4].Count), fmt.Sprint(prev, tag+4, 1)},
		}
		for _, k := range checks {
			if err := ranktest.Want(fmt.Sprintf("round %d: %s", round, k.what), fmt.Sprint(k.got), fmt.Sprint(k.want)); err != nil {
				return err
			}
		}
	}

	// A message of 4 MiB each way, both started at once: neither waits
	// for the other's receive.
	big := bytes.Repeat([]byte{byte(r + 1)}, 4<<20)
	bigIn := make([]byte, len(big))
	q, err := c.Isendrecv(big, next, 50, bigIn, prev, 50)
	if err != nil {
		return err
	}
	st, err := q.Wait()
	if err != nil {
		return err
	}
	if st.Count != len(big) || !bytes.Equal(bigIn, bytes.Repeat([]byte{byte(prev + 1)}, len(big))) {
		return fmt.Errorf("4 MiB Isendrecv: count %d, first byte %d, want %d of %d", st.Count, bigIn[0], len(big), prev+1)
	}

	// ProcNull both ways: complete with ProcNull's status.
	q, err = c.Isendrecv([]byte{1}, comm.ProcNull, 0, make([]byte, 1), comm.ProcNull, 0)
	if err != nil {
		return err
	}
	if st, err := q.Wait(); err != nil || st.Source != comm.ProcNull {
		return fmt.Errorf("Isendrecv with ProcNull: status %+v, %v", st, err)
	}

	// A destination outside the communicator: refused, naming the call,
	// with no receive left posted — the message from prev goes to the
	// next receive.
	in := make([]int64, 1)
	if _, err := comm.IsendrecvT(c, []int64{1}, n, 60, in, prev, 60); !errors.Is(err, comm.ErrRank) || !strings.Contains(err.Error(), "IsendrecvT") {
		return fmt.Errorf("IsendrecvT to rank %d of %d: %v, want ErrRank naming the call", n, n, err)
	}
	if _, err := comm.IsendrecvT(c, []int64{1}, next, -5, in, prev, 60); !errors.Is(err, comm.ErrTag) {
		return fmt.Errorf("IsendrecvT with tag -5: %v, want ErrTag", err)
	}
	q, err = comm.IsendrecvT(c, []int64{int64(r)}, next, 60, in, prev, 60)
	if err != nil {
		return err
	}
	if _, err := q.Wait(); err != nil {
		return err
	}
	if err := ranktest.Want("exchange after a refused one", in[0], int64(prev)); err != nil {
		return err
	}
	fmt.Printf("rank %d ok\n", r)
	return nil
}
