package extractive_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/workspace"
)

// printSink is the smallest useful Sink: events are printed, checkpoints commit the workspace.
// The job runner's sink stores events as timeline rows instead.
type printSink struct{ repo *workspace.Repo }

func (s printSink) Event(_ context.Context, e engine.Event) error {
	if e.Kind == engine.KindToolCall {
		fmt.Printf("%s %s: %s\n", e.Kind, e.Title, e.Content)
	}
	return nil
}

func (s printSink) Checkpoint(_ context.Context, message, checkpointType string) (string, error) {
	fmt.Printf("checkpoint %s: %s\n", checkpointType, message)
	return s.repo.Commit(message, checkpointType)
}

// A job run: a workspace with one input file, the extractive engine, a report.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "job")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	repo, err := workspace.Init(filepath.Join(dir, "workspace"))
	if err != nil {
		log.Fatal(err)
	}
	// The runner copies attachments into input_files/.
	if err := repo.WriteFile("input_files/notes.txt", []byte("Tidal power is predictable because tides follow the moon.\n")); err != nil {
		log.Fatal(err)
	}
	eng := extractive.New(extractive.Options{})
	res, err := eng.Run(context.Background(), engine.Input{
		Question:  "Why is tidal power predictable?",
		Effort:    engine.EffortLow,
		Workspace: repo,
	}, printSink{repo})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Report)
	// Output:
	// tool_call read_sources: input_files
	// tool_call search: Why is tidal power predictable?
	// checkpoint progress: Draft report (1 of 1 sub-questions)
	// checkpoint final: Final report
	// # Why is tidal power predictable?
	//
	// _Extractive report · effort low · 1 source, quotes from 1 · 1 sub-question_
	//
	// ## Answer
	//
	// “Tidal power is predictable because tides follow the moon.” [1]
	//
	// ## Sources
	//
	// 1. `input_files/notes.txt`, line 1
}
