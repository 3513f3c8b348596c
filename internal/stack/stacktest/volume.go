package stacktest

import (
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
)

// volumeListOptions selects the volumes of app: labelled by cairn, or named
// with its prefix (a volume created behind cairn's back has no label).
func volumeListOptions(app string) volume.ListOptions {
	return volume.ListOptions{Filters: filters.NewArgs(filters.Arg("name", app+"-"))}
}
