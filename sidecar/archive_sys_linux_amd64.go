package sidecar

// sysRenameat2 is renameat2(2) on linux/amd64, which package syscall does
// not name there.
const sysRenameat2 = 316
