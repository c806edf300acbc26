package main

import "github.com/shmrun/shmrun/comm"

func reduceSum(world *comm.Comm, v float64) (float64, error) { return v, world.Barrier() }
