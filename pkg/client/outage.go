package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"
)

// noteFailure switches to queue-only mode after an unreachable answer,
// unless the caller cancelled the call itself.
func (p *Pipeline) noteFailure(err error) {
	if !unreachable(err) || errors.Is(err, context.Canceled) {
		return
	}
	var wait time.Duration
	var ae *APIError
	if errors.As(err, &ae) {
		wait = ae.RetryAfter
	}
	p.markDown(wait)
}

// markDown records that the service is unreachable and starts a prober.
func (p *Pipeline) markDown(wait time.Duration) {
	p.stateMu.Lock()
	defer p.stateMu.Unlock()
	p.down.Store(true)
	if p.probing || p.ctx.Err() != nil {
		return
	}
	p.probing = true
	p.wg.Add(1)
	go p.probe(wait)
}

// markUp records that the service answered.
func (p *Pipeline) markUp() {
	p.stateMu.Lock()
	p.down.Store(false)
	p.stateMu.Unlock()
}

// probe polls GET /readyz with exponential backoff until the service
// answers (any answer but 502/503/504), then leaves queue-only mode.
func (p *Pipeline) probe(wait time.Duration) {
	defer p.wg.Done()
	interval := p.retry
	wait = max(wait, interval)
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			p.stateMu.Lock()
			p.probing = false
			p.stateMu.Unlock()
			return
		case <-t.C:
		}
		up := !p.down.Load() || p.ping()
		p.stateMu.Lock()
		if up {
			p.down.Store(false)
			p.probing = false
			p.stateMu.Unlock()
			p.backgroundFlush()
			return
		}
		p.stateMu.Unlock()
		interval = max(interval, min(interval*2, MaxRetryInterval))
		t.Reset(interval)
	}
}

func (p *Pipeline) ping() bool {
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.baseURL+"/readyz", nil)
	if err != nil {
		return false
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := p.hc.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return false
	}
	return true
}
