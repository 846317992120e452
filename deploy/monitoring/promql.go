package monitoring

import (
	"fmt"
	"slices"
	"strings"
)

// A small PromQL lexer: enough to find the metric names an expression
// selects and its top-level comparison. A full parser
// (github.com/prometheus/prometheus/promql/parser) would bring Prometheus's
// whole module graph into ours for two questions a lexer answers.

type token struct {
	text string
	pos  int
	kind tokenKind
}

type tokenKind int

const (
	tIdent tokenKind = iota
	tNumber
	tString
	tPunct
)

// comparisons are PromQL's comparison operators.
var comparisons = []string{"==", "!=", ">=", "<=", ">", "<"}

// twoChar are the operators of two characters, tried before one.
var twoChar = []string{"==", "!=", ">=", "<=", "=~", "!~"}

// lex splits an expression into tokens; it fails on an unterminated string
// or a character PromQL does not have.
func lex(q string) ([]token, error) {
	var out []token
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			end, err := stringEnd(q, i)
			if err != nil {
				return nil, err
			}
			out = append(out, token{q[i:end], i, tString})
			i = end
		case isDigit(c) || (c == '.' && i+1 < len(q) && isDigit(q[i+1])):
			// Numbers and durations (5m, 1h30m, 1e3, 0x1f).
			j := i
			for j < len(q) && (isIdent(q[j]) || q[j] == '.') {
				j++
			}
			out = append(out, token{q[i:j], i, tNumber})
			i = j
		case isIdentStart(c):
			j := i
			for j < len(q) && isIdent(q[j]) {
				j++
			}
			out = append(out, token{q[i:j], i, tIdent})
			i = j
		case i+1 < len(q) && slices.Contains(twoChar, q[i:i+2]):
			out = append(out, token{q[i : i+2], i, tPunct})
			i += 2
		case strings.IndexByte("(){}[],=+-*/%^<>@", c) >= 0:
			out = append(out, token{q[i : i+1], i, tPunct})
			i++
		default:
			return nil, fmt.Errorf("unexpected %q at %d in %q", c, i, q)
		}
	}
	return out, nil
}

func stringEnd(q string, start int) (int, error) {
	quote := q[start]
	for i := start + 1; i < len(q); i++ {
		switch {
		case q[i] == '\\' && quote != '`':
			i++
		case q[i] == quote:
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string at %d in %q", start, q)
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdent(c byte) bool      { return isIdentStart(c) || isDigit(c) }

// grouping keywords take a parenthesised list of label names.
var grouping = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}

// keywords are the other words that are not metric names.
var keywords = []string{"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan", "Inf", "NaN"}

// MetricNames returns the metric names an expression selects, sorted, each
// once: identifiers outside label matchers that are not a function, an
// aggregation, a keyword or a grouping's label list.
func MetricNames(q string) ([]string, error) {
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	var names []string
	braces := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.text == "{":
			braces++
		case t.text == "}":
			braces--
		case braces > 0:
			if n, ok := nameMatcher(toks, i); ok {
				names = append(names, n)
			}
		case t.kind != tIdent, slices.Contains(keywords, t.text):
		case slices.Contains(grouping, t.text):
			i = skipParens(toks, i+1)
		case i+1 < len(toks) && (toks[i+1].text == "(" || toks[i+1].text == "by" || toks[i+1].text == "without"):
			// A function, or an aggregation (sum by (l) (...)).
		default:
			names = append(names, t.text)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// nameMatcher reads {__name__="NAME"} at toks[i].
func nameMatcher(toks []token, i int) (string, bool) {
	if toks[i].text != "__name__" || i+2 >= len(toks) || toks[i+1].text != "=" || toks[i+2].kind != tString {
		return "", false
	}
	s := toks[i+2].text
	return s[1 : len(s)-1], true
}

// skipParens returns the index of the ")" closing the "(" at toks[i], or
// i-1 when toks[i] is not "(" (group_left without labels).
func skipParens(toks []token, i int) int {
	if i >= len(toks) || toks[i].text != "(" {
		return i - 1
	}
	for depth := 0; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return i
}

// Threshold splits an expression at its last comparison outside any
// parentheses, braces or brackets: "SIGNAL > 10" gives "SIGNAL" and "> 10".
// Without one it returns the expression and "".
func Threshold(q string) (signal, threshold string) {
	toks, err := lex(q)
	if err != nil {
		return q, ""
	}
	depth, at := 0, -1
	for _, t := range toks {
		switch {
		case strings.Contains("({[", t.text) && t.kind == tPunct:
			depth++
		case strings.Contains(")}]", t.text) && t.kind == tPunct:
			depth--
		case depth == 0 && t.kind == tPunct && slices.Contains(comparisons, t.text):
			at = t.pos
		}
	}
	if at < 0 {
		return q, ""
	}
	return strings.TrimSpace(q[:at]), strings.TrimSpace(q[at:])
}
