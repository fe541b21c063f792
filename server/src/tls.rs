//! `--tls-cert FILE --tls-key FILE`: the same port serves `https://` and `wss://` (rustls).

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;
use tracing::warn;

/// The server's TLS side: the acceptor, and the names its certificate is for.
pub(crate) struct Tls {
    pub acceptor: TlsAcceptor,
    /// The DNS names of the certificate (its subject alternative names; a wildcard one starts
    /// with `*.`): the server's own `https://` origins.
    pub dns_names: Vec<String>,
}

/// Reads a PEM certificate chain and private key into a TLS acceptor (TLS 1.2 and 1.3, ring).
pub(crate) fn acceptor(cert: &Path, key: &Path) -> std::io::Result<Tls> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|error| {
            std::io::Error::other(format!("--tls-cert {}: {error}", cert.display()))
        })?;
    if chain.is_empty() {
        return Err(std::io::Error::other(format!(
            "--tls-cert {}: no certificate in the file (expected PEM, -----BEGIN CERTIFICATE-----)",
            cert.display()
        )));
    }
    let dns_names = dns_names(&chain[0]);
    let key_der = PrivateKeyDer::from_pem_file(key)
        .map_err(|error| std::io::Error::other(format!("--tls-key {}: {error}", key.display())))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|error| {
            std::io::Error::other(format!(
                "--tls-cert {} and --tls-key {} do not make a usable pair: {error}",
                cert.display(),
                key.display()
            ))
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Tls {
        acceptor: TlsAcceptor::from(Arc::new(config)),
        dns_names,
    })
}

/// The DNS names a certificate is for; none if it cannot be read.
fn dns_names(certificate: &CertificateDer<'_>) -> Vec<String> {
    match webpki::EndEntityCert::try_from(certificate) {
        Ok(parsed) => parsed
            .valid_dns_names()
            .map(str::to_ascii_lowercase)
            .collect(),
        Err(error) => {
            warn!(?error, "cannot read the certificate's names");
            Vec::new()
        }
    }
}
