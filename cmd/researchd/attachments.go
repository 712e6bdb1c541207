package main

import (
	"fmt"
	"time"

	"github.com/researchd/researchd/attachments"
)

// attachmentsConfig reads the attachment limits: RESEARCH_ATTACHMENT_MAX_BYTES (per file, and the
// max_bytes of direct uploads; default 50 MiB), RESEARCH_ATTACHMENT_MAX_REQUEST_BYTES (a whole
// multipart request; default 20 files × the per-file limit) and RESEARCH_UPLOAD_TTL (how long a
// reserved upload and its token live; default 1h).
func attachmentsConfig(get func(name, def string) string) (attachments.Config, error) {
	var c attachments.Config
	var err error
	if c.MaxBytes, err = parseInt(get("RESEARCH_ATTACHMENT_MAX_BYTES", fmt.Sprint(attachments.DefaultMaxBytes)), "RESEARCH_ATTACHMENT_MAX_BYTES"); err != nil {
		return c, err
	}
	if v := get("RESEARCH_ATTACHMENT_MAX_REQUEST_BYTES", ""); v != "" {
		if c.MaxRequestBytes, err = parseInt(v, "RESEARCH_ATTACHMENT_MAX_REQUEST_BYTES"); err != nil {
			return c, err
		}
	}
	ttl := get("RESEARCH_UPLOAD_TTL", attachments.DefaultUploadTTL.String())
	if c.UploadTTL, err = time.ParseDuration(ttl); err != nil || c.UploadTTL <= 0 {
		return c, fmt.Errorf("RESEARCH_UPLOAD_TTL=%q: want a positive duration such as 1h or 30m", ttl)
	}
	return c, nil
}
