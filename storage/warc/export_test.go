package warc

// Kill drops w as a killed process leaves it: its file is closed, and its
// lock released with it, with no index written.
func Kill(w *Writer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	w.closed = true
}
