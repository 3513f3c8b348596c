package stacktest

import (
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
)

// volumeListOptions selects the volumes of app by name — its workspaces'
// (<app>-…, a volume created behind cairn's back has no label) and its
// shells' holder volume (<app>.holder.…): the engine's name filter matches
// a part of the name, and test app names are unique.
func volumeListOptions(app string) volume.ListOptions {
	return volume.ListOptions{Filters: filters.NewArgs(filters.Arg("name", app))}
}
