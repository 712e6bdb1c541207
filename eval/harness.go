package eval

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/researchd/researchd/qadata"
	"github.com/researchd/researchd/schema"
)

// Sets of tasks, as reported.
const (
	SetSQuAD      = "squad"      // SQuAD questions against their own article
	SetSwapped    = "swapped"    // SQuAD questions against another article (unanswerable)
	SetHotpot     = "hotpot"     // HotpotQA questions against their ten paragraphs
	SetHand       = "hand"       // hand-written questions against all hand-written documents
	SetStructured = "structured" // hand-written structured-output cases
)

// Task is one job to run at each effort: a question against documents, one attachment each.
type Task struct {
	Set          string
	Item         qadata.Item
	Expect       []string // hand-written: facts a right answer holds
	Unanswerable bool     // hand-written: the documents do not answer it
	Schema       map[string]any
	Fields       map[string]FieldExpect
}

// Result is one task's job at one effort, scored.
type Result struct {
	Set        string  `json:"set"`
	ID         string  `json:"id"`
	Effort     string  `json:"effort"`
	Question   string  `json:"question"`
	Answerable bool    `json:"answerable"`
	Status     string  `json:"status"`
	Error      string  `json:"error,omitempty"`
	Seconds    float64 `json:"seconds"`

	Answer        string   `json:"answer"` // the `## Answer` section
	FirstSentence string   `json:"first_sentence"`
	Expected      []string `json:"expected,omitempty"` // answers or expected facts
	FirstHit      bool     `json:"first_hit"`          // the first answer sentence holds an answer
	AnyHit        bool     `json:"any_hit"`            // the answer section holds an answer
	ExpectShare   float64  `json:"expect_share"`       // hand-written: share of expected facts in the answer
	Abstained     bool     `json:"abstained"`

	Quotes         int `json:"quotes"`
	QuotesVerified int `json:"quotes_verified"`
	CitedDocs      int `json:"cited_docs"`

	// HotpotQA: cited sentences mapped back to the paragraphs' sentences, against the supporting facts.
	Cited           []qadata.Fact `json:"cited,omitempty"`
	Precision       float64       `json:"precision"`
	Recall          float64       `json:"recall"`
	F1              float64       `json:"f1"`
	DistractorCited int           `json:"distractor_cited"`

	// Structured output.
	Output      map[string]any `json:"output,omitempty"`
	SchemaValid bool           `json:"schema_valid"`
	Fields      int            `json:"fields"`
	FieldsRight int            `json:"fields_right"`
	FieldErrors []string       `json:"field_errors,omitempty"`

	Markdown string `json:"markdown,omitempty"`
}

// Options say how to run the tasks.
type Options struct {
	Efforts     []string
	Concurrency int       // jobs in flight at once
	Progress    io.Writer // a line now and then; nil for none
	KeepReports bool      // keep each report's Markdown in its Result
}

// Run uploads every distinct document once, then runs all tasks at each effort in turn and
// returns the scored results with each effort's wall time.
func Run(ctx context.Context, c *Client, tasks []Task, opt Options) ([]Result, map[string]time.Duration, error) {
	conc := max(1, opt.Concurrency)
	ids := make([][]string, len(tasks))
	err := parallel(ctx, len(tasks), conc, func(i int) error {
		for _, d := range tasks[i].Item.Docs {
			id, err := c.Upload(ctx, d.Name, d.Text)
			if err != nil {
				return fmt.Errorf("upload %s: %w", d.Name, err)
			}
			ids[i] = append(ids[i], id)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var results []Result
	wall := map[string]time.Duration{}
	for _, effort := range opt.Efforts {
		start := time.Now()
		res := make([]Result, len(tasks))
		var mu sync.Mutex
		done := 0
		err := parallel(ctx, len(tasks), conc, func(i int) error {
			t := tasks[i]
			job, err := c.Research(ctx, t.Item.Question, effort, ids[i], t.Schema)
			if err != nil {
				return fmt.Errorf("%s %s: %w", t.Set, t.Item.ID, err)
			}
			res[i] = Score(t, job)
			res[i].Effort = effort
			if !opt.KeepReports {
				res[i].Markdown = ""
			}
			mu.Lock()
			done++
			if opt.Progress != nil && (done%50 == 0 || done == len(tasks)) {
				fmt.Fprintf(opt.Progress, "effort %s: %d/%d jobs, %.0fs\n", effort, done, len(tasks), time.Since(start).Seconds())
			}
			mu.Unlock()
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		wall[effort] = time.Since(start)
		results = append(results, res...)
	}
	return results, wall, nil
}

// parallel runs f(0..n-1) on up to conc goroutines and returns the first error (the others stop
// taking work).
func parallel(ctx context.Context, n, conc int, f func(i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for w := 0; w < min(conc, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

// Score measures one finished job against its task.
func Score(t Task, job Job) Result {
	it := t.Item
	r := Result{Set: t.Set, ID: it.ID, Question: it.Question, Status: job.Status, Seconds: job.Elapsed.Seconds(), Markdown: job.Markdown}
	if job.ErrorCode != "" {
		r.Error = job.ErrorCode + ": " + job.ErrorMsg
	}
	rep := ParseReport(job.Markdown)
	r.Answer = rep.Answer
	r.FirstSentence = rep.FirstSentence()
	r.Abstained = job.Status == "completed" && rep.Abstained()
	r.Quotes, r.QuotesVerified = QuoteCheck(rep, it.Docs)
	r.CitedDocs = CitedDocs(rep, it.Docs)
	answer := rep.AnswerText()
	switch t.Set {
	case SetHand:
		r.Answerable = !t.Unanswerable
		r.Expected = t.Expect
		if r.Answerable && !r.Abstained {
			r.ExpectShare = ExpectShare(answer, t.Expect)
			r.AnyHit = r.ExpectShare > 0
			r.FirstHit = ExpectShare(r.FirstSentence, t.Expect) > 0
		}
	case SetStructured:
		r.Answerable = true
		scoreStructured(&r, t, job)
	default:
		r.Answerable = it.Answerable()
		r.Expected = it.Answers
		if r.Answerable && !r.Abstained {
			r.FirstHit = qadata.ContainsAnswer(r.FirstSentence, it.Answers)
			r.AnyHit = qadata.ContainsAnswer(answer, it.Answers)
		}
	}
	if t.Set == SetHotpot {
		r.Cited = CitedSentences(rep, it.Docs)
		r.Precision, r.Recall, r.F1 = PRF(r.Cited, it.Support)
		support := map[string]bool{}
		for _, f := range it.Support {
			support[f.Doc] = true
		}
		for _, f := range r.Cited {
			if !support[f.Doc] {
				r.DistractorCited++
			}
		}
	}
	return r
}

func scoreStructured(r *Result, t Task, job Job) {
	r.Output = job.Structured
	if job.Status == "completed" && job.Structured != nil {
		if sch, err := schema.Compile(t.Schema); err == nil {
			if v, err := schema.ToJSONValue(job.Structured); err == nil {
				r.SchemaValid = sch.Validate(v) == nil
			}
		}
	}
	names := make([]string, 0, len(t.Fields))
	for name := range t.Fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want := t.Fields[name]
		r.Fields++
		got, ok := job.Structured[name]
		if ok && FieldRight(got, want) {
			r.FieldsRight++
		} else {
			r.FieldErrors = append(r.FieldErrors, fmt.Sprintf("%s: got %v, want %s %v", name, got, want.Rule, want.Value))
		}
	}
}
