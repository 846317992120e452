package main

import (
	"sync"
	"time"
)

// maxErrors is how many distinct error texts a Stream keeps.
const maxErrors = 5

// Stream counts the requests of one kind and what went wrong.
type Stream struct {
	mu     sync.Mutex
	Sent   int `json:"sent"`
	Failed int `json:"failed"`
	// Broken counts established long-lived connections that failed.
	Broken int `json:"broken,omitempty"`
	// First and Last are when the first and the last failure happened.
	First  *time.Time `json:"firstFailure,omitempty"`
	Last   *time.Time `json:"lastFailure,omitempty"`
	Errors []string   `json:"errors,omitempty"`
}

func (s *Stream) record(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Sent++
	if err != nil {
		s.Failed++
		s.failure(err)
	}
}

func (s *Stream) broke(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Broken++
	s.failure(err)
}

func (s *Stream) failure(err error) {
	now := time.Now().UTC()
	if s.First == nil {
		s.First = &now
	}
	s.Last = &now
	text := err.Error()
	for _, e := range s.Errors {
		if e == text {
			return
		}
	}
	if len(s.Errors) < maxErrors {
		s.Errors = append(s.Errors, text)
	}
}
