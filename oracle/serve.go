package main

// --serve: many runs in one process, for the differential tests and their
// shrinking, which run the oracle thousands of times. Each line of standard
// input is a request, {"id": ..., "mode": "explain", "config": FILE,
// "paths": [FIXTURE...]}; each answer is one line of standard output,
// {"id": ..., "document": {...}} or {"id": ..., "error": "..."}, in the
// order of the requests. The feature gates are the process's (its
// --feature-gates); every run builds its scheduler anew, as a separate
// process would. A panic in the scheduler is that request's error.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

type request struct {
	ID     any      `json:"id"`
	Mode   string   `json:"mode"`
	Config string   `json:"config"`
	Paths  []string `json:"paths"`
}

func serve(in io.Reader, out io.Writer) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 {
			continue
		}
		var req request
		answer := map[string]any{}
		if err := json.Unmarshal(line, &req); err != nil {
			answer["error"] = fmt.Sprintf("bad request: %v", err)
		} else {
			answer["id"] = req.ID
			if req.Mode == "" {
				req.Mode = "explain"
			}
			doc, err := runRecovered(req)
			if err != nil {
				answer["error"] = err.Error()
			} else {
				answer["document"] = doc
			}
		}
		if err := enc.Encode(answer); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return scanner.Err()
}

func runRecovered(req request) (doc map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	if req.Mode != "explain" && req.Mode != "simulate" {
		return nil, fmt.Errorf("mode %q: explain or simulate", req.Mode)
	}
	if len(req.Paths) == 0 {
		return nil, fmt.Errorf("no fixture paths")
	}
	return run(req.Mode, req.Config, req.Paths)
}

func serveStdio() int {
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "oracle: --serve: %v\n", err)
		return 1
	}
	return 0
}
