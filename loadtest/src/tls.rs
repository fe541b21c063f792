//! TLS for `bench --tls`: a fresh self-signed certificate for `127.0.0.1` and `localhost`, the
//! rustls server configuration the relay and the floor terminate TLS with (the server reads the
//! same files through its own `--tls-cert` and `--tls-key`), and the client configuration the
//! bots speak `wss://` with, trusting that certificate alone (no root-certificate crate).
//!
//! Everything uses rustls with the ring provider, TLS 1.2 and 1.3 (rustls's safe defaults), as
//! the server does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// What can go wrong setting TLS up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate could not be generated.
    #[error("generating the certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// A file could not be read or written.
    #[error("{path}: {error}")]
    File {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// A PEM text holds no usable certificate or key.
    #[error("{what}: {error}")]
    Pem {
        /// Which text.
        what: String,
        /// The error.
        error: rustls::pki_types::pem::Error,
    },
    /// A PEM text holds no certificate.
    #[error("{0}: no certificate in it (expected PEM, -----BEGIN CERTIFICATE-----)")]
    NoCertificate(String),
    /// rustls refused the configuration.
    #[error("{0}")]
    Rustls(#[from] rustls::Error),
}

/// A self-signed certificate and its key, as PEM text.
#[derive(Debug, Clone)]
pub struct SelfSigned {
    /// The certificate (also what a client trusts).
    pub cert_pem: String,
    /// Its private key.
    pub key_pem: String,
}

/// The names the benchmark's certificate is for.
pub const NAMES: [&str; 2] = ["127.0.0.1", "localhost"];

impl SelfSigned {
    /// A fresh key and certificate for [`NAMES`].
    pub fn generate() -> Result<Self, TlsError> {
        let names: Vec<String> = NAMES.iter().map(|&n| n.to_owned()).collect();
        let rcgen::CertifiedKey { cert, signing_key } = rcgen::generate_simple_self_signed(names)?;
        Ok(Self {
            cert_pem: cert.pem(),
            key_pem: signing_key.serialize_pem(),
        })
    }

    /// Writes `cert.pem` and `key.pem` into `dir`; returns their paths.
    pub fn write_to(&self, dir: &Path) -> Result<(PathBuf, PathBuf), TlsError> {
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        for (path, text) in [(&cert, &self.cert_pem), (&key, &self.key_pem)] {
            std::fs::write(path, text).map_err(|error| TlsError::File {
                path: path.clone(),
                error,
            })?;
        }
        Ok((cert, key))
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|error| TlsError::File {
        path: path.to_owned(),
        error,
    })
}

fn certificates(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let chain = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| TlsError::Pem {
            what: what.to_owned(),
            error,
        })?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate(what.to_owned()));
    }
    Ok(chain)
}

/// The server side from PEM text: the certificate chain and its private key.
pub fn server_config_pem(
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let chain = certificates(cert_pem, "the certificate")?;
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|error| TlsError::Pem {
        what: "the private key".to_owned(),
        error,
    })?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The server side from PEM files (`--tls-cert`, `--tls-key`).
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    server_config_pem(&read(cert)?, &read(key)?)
}

/// The client side: trusts the certificates of `ca_pem` and nothing else.
pub fn client_config_pem(ca_pem: &[u8]) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    for certificate in certificates(ca_pem, "the certificate to trust")? {
        roots.add(certificate)?;
    }
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The client side from a PEM file (`--ca-cert`, or the bench's certificate).
pub fn client_config(ca: &Path) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    client_config_pem(&read(ca)?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_generated_pair_makes_both_sides_and_garbage_is_refused() {
        let pair = SelfSigned::generate().unwrap();
        assert!(server_config_pem(pair.cert_pem.as_bytes(), pair.key_pem.as_bytes()).is_ok());
        assert!(client_config_pem(pair.cert_pem.as_bytes()).is_ok());
        assert!(matches!(
            client_config_pem(b"not a certificate"),
            Err(TlsError::NoCertificate(_))
        ));
        assert!(server_config_pem(pair.cert_pem.as_bytes(), b"no key").is_err());
    }
}
