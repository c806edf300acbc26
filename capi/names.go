//go:build !mpi

package main

/*
#include "mpi.h"
*/
import "C"

import "golang.org/x/sys/unix"

// classNames names the error classes (MPI_Error_string of a class).
var classNames = map[C.int]string{
	C.MPI_SUCCESS:                   "MPI_SUCCESS",
	C.MPI_ERR_BUFFER:                "MPI_ERR_BUFFER",
	C.MPI_ERR_COUNT:                 "MPI_ERR_COUNT",
	C.MPI_ERR_TYPE:                  "MPI_ERR_TYPE",
	C.MPI_ERR_TAG:                   "MPI_ERR_TAG",
	C.MPI_ERR_COMM:                  "MPI_ERR_COMM",
	C.MPI_ERR_RANK:                  "MPI_ERR_RANK",
	C.MPI_ERR_REQUEST:               "MPI_ERR_REQUEST",
	C.MPI_ERR_ROOT:                  "MPI_ERR_ROOT",
	C.MPI_ERR_GROUP:                 "MPI_ERR_GROUP",
	C.MPI_ERR_OP:                    "MPI_ERR_OP",
	C.MPI_ERR_TOPOLOGY:              "MPI_ERR_TOPOLOGY",
	C.MPI_ERR_DIMS:                  "MPI_ERR_DIMS",
	C.MPI_ERR_ARG:                   "MPI_ERR_ARG",
	C.MPI_ERR_UNKNOWN:               "MPI_ERR_UNKNOWN",
	C.MPI_ERR_TRUNCATE:              "MPI_ERR_TRUNCATE",
	C.MPI_ERR_OTHER:                 "MPI_ERR_OTHER",
	C.MPI_ERR_INTERN:                "MPI_ERR_INTERN",
	C.MPI_ERR_PENDING:               "MPI_ERR_PENDING",
	C.MPI_ERR_IN_STATUS:             "MPI_ERR_IN_STATUS",
	C.MPI_ERR_ACCESS:                "MPI_ERR_ACCESS",
	C.MPI_ERR_AMODE:                 "MPI_ERR_AMODE",
	C.MPI_ERR_ASSERT:                "MPI_ERR_ASSERT",
	C.MPI_ERR_BAD_FILE:              "MPI_ERR_BAD_FILE",
	C.MPI_ERR_BASE:                  "MPI_ERR_BASE",
	C.MPI_ERR_CONVERSION:            "MPI_ERR_CONVERSION",
	C.MPI_ERR_DISP:                  "MPI_ERR_DISP",
	C.MPI_ERR_DUP_DATAREP:           "MPI_ERR_DUP_DATAREP",
	C.MPI_ERR_FILE_EXISTS:           "MPI_ERR_FILE_EXISTS",
	C.MPI_ERR_FILE_IN_USE:           "MPI_ERR_FILE_IN_USE",
	C.MPI_ERR_FILE:                  "MPI_ERR_FILE",
	C.MPI_ERR_INFO_KEY:              "MPI_ERR_INFO_KEY",
	C.MPI_ERR_INFO_NOKEY:            "MPI_ERR_INFO_NOKEY",
	C.MPI_ERR_INFO_VALUE:            "MPI_ERR_INFO_VALUE",
	C.MPI_ERR_INFO:                  "MPI_ERR_INFO",
	C.MPI_ERR_IO:                    "MPI_ERR_IO",
	C.MPI_ERR_KEYVAL:                "MPI_ERR_KEYVAL",
	C.MPI_ERR_LOCKTYPE:              "MPI_ERR_LOCKTYPE",
	C.MPI_ERR_NAME:                  "MPI_ERR_NAME",
	C.MPI_ERR_NO_MEM:                "MPI_ERR_NO_MEM",
	C.MPI_ERR_NOT_SAME:              "MPI_ERR_NOT_SAME",
	C.MPI_ERR_NO_SPACE:              "MPI_ERR_NO_SPACE",
	C.MPI_ERR_NO_SUCH_FILE:          "MPI_ERR_NO_SUCH_FILE",
	C.MPI_ERR_PORT:                  "MPI_ERR_PORT",
	C.MPI_ERR_QUOTA:                 "MPI_ERR_QUOTA",
	C.MPI_ERR_READ_ONLY:             "MPI_ERR_READ_ONLY",
	C.MPI_ERR_RMA_ATTACH:            "MPI_ERR_RMA_ATTACH",
	C.MPI_ERR_RMA_CONFLICT:          "MPI_ERR_RMA_CONFLICT",
	C.MPI_ERR_RMA_RANGE:             "MPI_ERR_RMA_RANGE",
	C.MPI_ERR_RMA_SHARED:            "MPI_ERR_RMA_SHARED",
	C.MPI_ERR_RMA_SYNC:              "MPI_ERR_RMA_SYNC",
	C.MPI_ERR_SERVICE:               "MPI_ERR_SERVICE",
	C.MPI_ERR_SIZE:                  "MPI_ERR_SIZE",
	C.MPI_ERR_SPAWN:                 "MPI_ERR_SPAWN",
	C.MPI_ERR_UNSUPPORTED_DATAREP:   "MPI_ERR_UNSUPPORTED_DATAREP",
	C.MPI_ERR_UNSUPPORTED_OPERATION: "MPI_ERR_UNSUPPORTED_OPERATION",
	C.MPI_ERR_WIN:                   "MPI_ERR_WIN",
	C.MPI_ERR_RMA_FLAVOR:            "MPI_ERR_RMA_FLAVOR",
	C.MPI_ERR_PROC_ABORTED:          "MPI_ERR_PROC_ABORTED",
	C.MPI_ERR_VALUE_TOO_LARGE:       "MPI_ERR_VALUE_TOO_LARGE",
	C.MPI_ERR_SESSION:               "MPI_ERR_SESSION",
	C.MPI_ERR_ERRHANDLER:            "MPI_ERR_ERRHANDLER",
	C.MPI_ERR_ABI:                   "MPI_ERR_ABI",
}

// osThread is the calling OS thread (MPI_Is_thread_main).
func osThread() int { return unix.Gettid() }
