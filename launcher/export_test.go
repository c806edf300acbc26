package launcher

// Names the external tests need of the launcher's internals.
var RemoveJobObjects = removeJobObjects

const OrphanAge = orphanAge

var StatCPU = statCPU
