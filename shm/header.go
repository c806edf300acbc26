package shm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Header errors. ReadHeader checks magic, version, the header length it
// needs to compute the checksum, the checksum, and only then the fields the
// checksum vouches for (kind, total size): a changed byte is ErrCorrupt, and
// an intact header that is not the one expected names the field.
var (
	ErrBadMagic   = errors.New("bad magic: not a shmrun segment")
	ErrVersion    = errors.New("unsupported segment format version")
	ErrKind       = errors.New("wrong segment kind")
	ErrTruncated  = errors.New("segment truncated")
	ErrCorrupt    = errors.New("segment header checksum mismatch")
	ErrHeaderSize = errors.New("bad header length")
	// ErrMismatch is a field of an intact header (its checksum holds) that
	// differs from what the reader expects: the segment is not the one it
	// was told to map. The error that wraps it names the field.
	ErrMismatch = errors.New("segment header field mismatch")
)

// Magic opens every shmrun segment.
var Magic = [8]byte{'S', 'H', 'M', 'R', 'U', 'N', 0, 1}

// FormatVersion is the segment format version this code writes and reads.
const FormatVersion = 12

// Segment kinds.
const (
	KindControl    uint32 = 1
	KindWindow     uint32 = 2
	KindCollective uint32 = 3 // a communicator's collective area
	KindInbox      uint32 = 4 // a rank's point-to-point inbox
)

// Fixed header fields, little-endian, at the start of every segment (see
// docs/FORMAT.md):
//
//	0  [8]byte magic
//	8  uint32  format version
//	12 uint32  kind
//	16 uint64  header length in bytes (the checksummed area)
//	24 uint64  total segment size in bytes
//	32 uint32  CRC-32C of [0, header length) with this field taken as zero
//	36 uint32  reserved, zero
//	40 ...     kind-specific fields, inside the header length
//
// The offsets are exported for C code that attaches to a segment (the
// generated include/shmrun/format.h takes them from here).
const (
	OffMagic       = 0  // [8]byte Magic
	OffVersion     = 8  // uint32 FormatVersion
	OffKind        = 12 // uint32 KindControl, KindWindow or KindCollective
	OffHeaderLen   = 16 // uint64 length of the checksummed area
	OffTotalSize   = 24 // uint64 segment size in bytes
	OffChecksum    = 32 // uint32 CRC-32C (Castagnoli) of the header, this field as zero
	OffReserved    = 36 // uint32 zero
	FixedHeaderLen = 40 // where kind-specific fields start
)

// Header is the decoded fixed part of a segment header.
type Header struct {
	Version   uint32
	Kind      uint32
	HeaderLen uint64
	TotalSize uint64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteHeader writes the fixed header into m and seals m[:h.HeaderLen] with
// its checksum. Kind-specific fields must already be in place after
// FixedHeaderLen. It is called once, by the creator, before any peer maps.
func WriteHeader(m []byte, h Header) error {
	if h.HeaderLen < FixedHeaderLen || h.HeaderLen > uint64(len(m)) || h.TotalSize < h.HeaderLen {
		return fmt.Errorf("shm: write header: length %d, total %d, mapping %d: %w", h.HeaderLen, h.TotalSize, len(m), ErrHeaderSize)
	}
	copy(m[OffMagic:OffMagic+8], Magic[:])
	le := binary.LittleEndian
	le.PutUint32(m[OffVersion:], FormatVersion)
	le.PutUint32(m[OffKind:], h.Kind)
	le.PutUint64(m[OffHeaderLen:], h.HeaderLen)
	le.PutUint64(m[OffTotalSize:], h.TotalSize)
	le.PutUint32(m[OffChecksum:], 0)
	le.PutUint32(m[OffReserved:], 0)
	le.PutUint32(m[OffChecksum:], checksum(m[:h.HeaderLen]))
	return nil
}

func checksum(hdr []byte) uint32 {
	c := crc32.Update(0, castagnoli, hdr[:OffChecksum])
	c = crc32.Update(c, castagnoli, []byte{0, 0, 0, 0})
	return crc32.Update(c, castagnoli, hdr[OffChecksum+4:])
}

// ReadHeader validates the header at the start of m, field by field, for a
// segment of the given kind whose object is size bytes long (-1: unknown),
// and returns it. It never reads outside m, nor past size.
func ReadHeader(m []byte, kind uint32, size int64) (Header, error) {
	if len(m) < FixedHeaderLen {
		return Header{}, fmt.Errorf("shm: header: %d bytes mapped, need %d: %w", len(m), FixedHeaderLen, ErrTruncated)
	}
	if [8]byte(m[OffMagic:OffMagic+8]) != Magic {
		return Header{}, fmt.Errorf("shm: header: magic %q: %w", m[OffMagic:OffMagic+8], ErrBadMagic)
	}
	le := binary.LittleEndian
	h := Header{
		Version:   le.Uint32(m[OffVersion:]),
		Kind:      le.Uint32(m[OffKind:]),
		HeaderLen: le.Uint64(m[OffHeaderLen:]),
		TotalSize: le.Uint64(m[OffTotalSize:]),
	}
	if h.Version != FormatVersion {
		return h, fmt.Errorf("shm: header: version %d, this build reads %d: %w", h.Version, FormatVersion, ErrVersion)
	}
	// The checksum reads the whole header, so its length must lie inside
	// the mapping and, where the object's size is known, inside the
	// object: a mapping's pages past the object's end fault when touched.
	limit := uint64(len(m))
	if size >= 0 && uint64(size) < limit {
		limit = uint64(size)
	}
	if h.HeaderLen < FixedHeaderLen || h.HeaderLen > limit {
		return h, fmt.Errorf("shm: header: length %d outside [%d, %d]: %w", h.HeaderLen, FixedHeaderLen, limit, ErrHeaderSize)
	}
	if got, want := checksum(m[:h.HeaderLen]), le.Uint32(m[OffChecksum:]); got != want {
		return h, fmt.Errorf("shm: header: checksum %#08x, computed %#08x: %w", want, got, ErrCorrupt)
	}
	if r := le.Uint32(m[OffReserved:]); r != 0 {
		return h, fmt.Errorf("shm: header: reserved field is %#x, must be 0: %w", r, ErrMismatch)
	}
	if h.Kind != kind {
		return h, fmt.Errorf("shm: header: kind %d, want %d: %w", h.Kind, kind, ErrKind)
	}
	if h.HeaderLen > h.TotalSize {
		return h, fmt.Errorf("shm: header: length %d exceeds the total size %d: %w", h.HeaderLen, h.TotalSize, ErrHeaderSize)
	}
	if size >= 0 && h.TotalSize > uint64(size) {
		return h, fmt.Errorf("shm: header: says %d bytes, object has %d: %w", h.TotalSize, size, ErrTruncated)
	}
	return h, nil
}
