package service

import (
	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// Bounds are the limits this service holds requests to, as it applies
// them (defaults filled in), for GET /v1/info; the request body's bound
// is the front door's and is left zero.
func (s *Service) Bounds() cairn.InfoBounds {
	return cairn.InfoBounds{
		MaxObjectSize:      s.maxObjectSize,
		SinglePutMax:       s.singlePutCap(),
		MultipartThreshold: s.multipartThreshold,
		PartSize:           s.partSize,
		PartsPerRequest:    cairn.MaxPartBatch,
		ListLimit:          cairn.MaxListLimit,
		PutURLTTLSecs:      int(s.putURLTTL.Seconds()),
		GetURLMaxTTLSecs:   int(s.getURLMaxTTL.Seconds()),
		FileReadMaxBytes:   sidecar.MaxReadBytes,
		UnpackMaxEntries:   s.unpackLimits.MaxEntries,
		UnpackMaxBytes:     s.unpackLimits.MaxBytes,
		UnpackMaxRatio:     s.unpackLimits.MaxRatio,
		FileWriteMaxBytes:  s.maxFileWrite,
	}
}
