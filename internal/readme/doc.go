// Package readme holds no code, only tests that keep the repository's
// documents true: every Go program in README.md builds and runs under the
// launcher with the output the README shows, the quick-start test command is
// the one CI runs, and the documents link only to files of the repository.
// A README that drifts from the code fails go test, not a reader.
package readme
