package extract

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCellNumber(t *testing.T) {
	t.Parallel()
	for cell, want := range map[string]float64{
		"12,450": 12450, "4.8": 4.8, "$3": 3, "12%": 12, "-2.5": -2.5,
		"78 km": 78, "2,190 euros": 2190, "23.5 kg": 23.5, "500 Wh": 500, "21 °C": 21, "3 per cent": 3,
	} {
		got, ok := CellNumber(cell)
		require.True(t, ok, cell)
		require.Equal(t, want, got, cell)
	}
	for _, cell := range []string{"Vello Urban 3", "belt, 5", "4.1 kWh/100 km", "12 May 2024", "n/a", ""} {
		_, ok := CellNumber(cell)
		require.False(t, ok, cell)
	}
}

func TestTableLabelLeavesFiguresOut(t *testing.T) {
	t.Parallel()
	tb := Table{
		Header: []string{"Model", "Range", "Gears"},
		Rows:   [][]string{{"Vello Urban 3", "78 km", "8"}, {"Marrow C2", "61 km", "7"}, {"Tandem Ease", "104 km", "belt, 5"}},
	}
	require.True(t, tb.NumericCol(1), "figures with a unit")
	require.False(t, tb.NumericCol(2))
	require.Equal(t, "Tandem Ease", tb.Label(2, -1), "a column of figures with one word among them names no row")
}
