package reconcile

// SetPageSize shrinks the listing and row pages, so tests reach page two.
func SetPageSize(r *Reconciler, n int) { r.pageSize = n }
