package campaign

import "math/bits"

// Workforce is who does a campaign's work (CampaignWorkforce), stored as JSON with the campaign.
type Workforce struct {
	Members []Member `json:"members"`
	Totals  Totals   `json:"totals"`
}

// Member staffs one agent stage.
type Member struct {
	StageKey    string  `json:"stage_key"`
	AgentID     *string `json:"agent_id"`
	AgentName   string  `json:"agent_name"`
	Effort      string  `json:"effort"`
	Concurrency int     `json:"concurrency"`
}

// Totals over the workforce.
type Totals struct {
	Members        int `json:"members"`
	MaxConcurrency int `json:"max_concurrency"`
}

func workforce(p Plan, res resolved) Workforce {
	w := Workforce{Members: make([]Member, len(p.Stages))}
	for i, st := range p.Stages {
		w.Members[i] = Member{StageKey: st.Key, AgentID: res.agentID[i], AgentName: res.agentName[i], Effort: res.effort[i], Concurrency: st.Concurrency}
	}
	w.Totals = Totals{Members: len(p.Stages), MaxConcurrency: maxConcurrency(p)}
	return w
}

// maxConcurrency is the highest sum of concurrency over stages that can run at the same time:
// stages neither of which (transitively) depends on the other. That is a maximum-weight
// independent set of the "ordered" graph; plans have at most 32 stages, so a branch and bound over
// bit sets is exact and quick.
func maxConcurrency(p Plan) int {
	n := len(p.Stages)
	pos := map[string]int{}
	above := make([]uint64, n) // stages each one (transitively) depends on
	for i, st := range p.Stages {
		pos[st.Key] = i
		for _, d := range st.DependsOn {
			if j, ok := pos[d]; ok && j < i {
				above[i] |= above[j] | 1<<j
			}
		}
	}
	conflict := make([]uint64, n)
	weight := make([]int, n)
	for i, st := range p.Stages {
		weight[i] = st.Concurrency
		for j := range n {
			if above[i]&(1<<j) != 0 {
				conflict[i] |= 1 << j
				conflict[j] |= 1 << i
			}
		}
	}
	var all uint64
	if n > 0 {
		all = 1<<n - 1
	}
	return bestSet(all, conflict, weight)
}

func bestSet(set uint64, conflict []uint64, weight []int) int {
	if set == 0 {
		return 0
	}
	// Without conflicts inside the set, take all of it.
	pick, most := -1, 0
	total := 0
	for s := set; s != 0; s &= s - 1 {
		i := bits.TrailingZeros64(s)
		total += weight[i]
		if d := bits.OnesCount64(conflict[i] & set); d > most {
			pick, most = i, d
		}
	}
	if pick < 0 {
		return total
	}
	without := bestSet(set&^(1<<pick), conflict, weight)
	with := weight[pick] + bestSet(set&^(1<<pick)&^conflict[pick], conflict, weight)
	return max(with, without)
}
