package engine

import "strconv"

// CiteRange is how a report cites lines of a source: "`input_files/a.txt`, lines 3–7" (citation
// verification reads the path back from it).
func CiteRange(path string, start, end int) string {
	if start == end {
		return "`" + path + "`, line " + strconv.Itoa(start)
	}
	return "`" + path + "`, lines " + strconv.Itoa(start) + "–" + strconv.Itoa(end)
}
