package reach

import (
	"bufio"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// LoadCAs reads a PEM file of certificates into a pool holding the
// system's roots as well. The file must be a regular one holding at least
// one certificate.
func LoadCAs(path string) (*x509.CertPool, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}

// ReadPassword reads the first line of a password file, its line end
// dropped. The file must be a regular one (a FIFO would block the reading
// for ever), and its error never quotes its content.
func ReadPassword(path string) (string, error) {
	if path == "" {
		return "", errors.New("must name the file holding the password")
	}
	if fi, err := os.Stat(path); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() || sc.Text() == "" {
		if err := sc.Err(); err != nil {
			return "", fmt.Errorf("read %s: %w", path, err)
		}
		return "", fmt.Errorf("%s: empty; the password is its first line", path)
	}
	return strings.TrimSuffix(sc.Text(), "\r"), nil
}
