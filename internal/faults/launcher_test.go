package faults

// envAsLauncher makes the test binary run one job through launcher.Run, as
// the shmrun command does, so that a test can SIGKILL a real launcher
// process.
const envAsLauncher = "FAULTS_AS_LAUNCHER"

func launcherMain() int { return 2 }
