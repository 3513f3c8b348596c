package service

// MountCallersWaiting is how many volumes the next mount-count round will
// ask for.
func (s *Service) MountCallersWaiting() int {
	s.mounts.mu.Lock()
	defer s.mounts.mu.Unlock()
	if s.mounts.next == nil {
		return 0
	}
	return len(s.mounts.next.volumes)
}
