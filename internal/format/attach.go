package format

// A dynamic window (FlavorDynamic) has no data of its own: rank r's part of
// the segment is r's attach table, the regions r has attached, which
// origins read to check and place their RMA calls with no help from r.
//
//	[0, Line)          AttachSeq: uint64, even while the table is stable, odd
//	                   while its owner edits it (a sequence lock); AttachCount:
//	                   uint64, the number of entries
//	[Line, 2*Line)     AttachAccess: r's access slots as an origin, Line/8 uint64
//	[2*Line, ...)      entries, AttachEntryLen bytes each, sorted by base
//
// An entry is a region of the owner's memory: AttachBase and AttachLen, its
// address and length in the owner; AttachMap, nonzero when the region lies
// in a shared-memory object of the owner (a block of the shared heap, or a
// window's segment), which an origin maps whole by /proc/<pid>/fd/<AttachFD>
// after checking its inode (AttachIno) and size (AttachFileSize), the region
// then starting AttachFileOff bytes into it; zero for private memory, which
// origins reach by process_vm_readv/writev.
//
// The access slots make Detach safe against RMA in flight: an origin
// claims a free slot (low half 0) by compare-and-swap to (n<<32)|(target+1),
// a full fence, before it reads target's table, and stores n<<32 once its
// copy into the region is done (n counts the slot's uses; goroutines of one
// rank in RMA calls at once take a slot each). Detach edits the table, runs
// membarrier's global expedited barrier, then waits until no slot names it
// with the value it saw: an access either began after the edit (it sees
// the new table) or has ended. That barrier lets an origin registered for
// the command claim a slot no other thread of its process can claim
// meanwhile by a plain store of the same value (package win's pinSlots).
const (
	AttachSeq      = 0
	AttachCount    = 8
	AttachAccess   = Line
	AttachEntries  = 2 * Line
	AttachEntryLen = 64 // seven words used

	AttachBase     = 0  // uint64
	AttachLen      = 8  // uint64
	AttachMap      = 16 // uint64
	AttachFileOff  = 24 // uint64
	AttachFileSize = 32 // uint64
	AttachIno      = 40 // uint64
	AttachFD       = 48 // uint32

	// DefaultMaxAttach is the number of regions a rank may attach to one
	// dynamic window unless info shmrun_max_attach says otherwise.
	DefaultMaxAttach = 1024
)

// AttachTableLen is the length of an attach table of max entries.
func AttachTableLen(max int) int64 { return AttachEntries + int64(max)*AttachEntryLen }
