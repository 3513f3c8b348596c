package docker

// MaxFilteredVolumes is the most names MountCounts sends as filters.
const MaxFilteredVolumes = maxFilteredVolumes
