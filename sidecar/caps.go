package sidecar

// Capabilities are the Linux capabilities a command's container adds to an
// otherwise powerless root; every runtime grants these and no others. Prep
// adds none (owning what it changes suffices for chown to itself and
// chmod). Unpack restores the owners and modes an archive records, of files
// it does not own: DAC_OVERRIDE, CHOWN and FOWNER. A restore gives back
// those a snapshot recorded, set-gid files of any group included, which
// needs FSETID too. Download replaces a file
// by a new one that keeps the old one's owner: DAC_OVERRIDE and CHOWN. A
// writer (a writable serve) writes files of any owner, gives a new one its
// directory's owner and renames and removes in any directory, sticky ones
// included: DAC_OVERRIDE, CHOWN and FOWNER. The others, a snapshot among
// them, read or write files of other users: DAC_OVERRIDE.
func Capabilities(command string) []string {
	switch command {
	case CommandPrep:
		return nil
	case CommandUnpack, CommandWrite:
		return []string{"DAC_OVERRIDE", "CHOWN", "FOWNER"}
	case CommandRestore:
		return []string{"DAC_OVERRIDE", "CHOWN", "FOWNER", "FSETID"}
	case CommandDownload:
		return []string{"DAC_OVERRIDE", "CHOWN"}
	default:
		return []string{"DAC_OVERRIDE"}
	}
}
