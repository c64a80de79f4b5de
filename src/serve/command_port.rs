//! The command port: ZooKeeper's `ControllerService` protocol, one HTTP request a connection.

use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{now, Served};
use crate::sim::wire_service::Control;

/// Takes the command port's requests, one a connection: `GET /command/<ACTION>[/<parameter>]`
/// answered `200 OK` once carried out, `400 Bad Request` with the reason otherwise.
pub(super) async fn command_port(listener: TcpListener, served: Arc<Served>) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let served = served.clone();
        tokio::spawn(async move {
            let mut request = Vec::new();
            let mut buffer = [0; 512];
            // The request line is all the port reads; a request longer than a few lines is
            // not one of its commands.
            while !request.windows(4).any(|end| end == b"\r\n\r\n") && request.len() < 4096 {
                match stream.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let line = String::from_utf8_lossy(&request);
            let line = line.lines().next().unwrap_or_default();
            let answer = match command_of(line) {
                Ok(command) => {
                    served.input(|core| core.control(command, now()));
                    "HTTP/1.0 200 OK\r\n\r\n".to_owned()
                }
                Err(why) => format!("HTTP/1.0 400 Bad Request\r\n\r\n{why}\n"),
            };
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
        });
    }
}

/// The command of a request line `GET /command/<ACTION>[/<parameter>] HTTP/1.x`.
fn command_of(line: &str) -> Result<Control, String> {
    let mut words = line.split_whitespace();
    let (method, target) = (words.next(), words.next());
    let path = match (method, target) {
        (Some("GET"), Some(target)) => target.strip_prefix("/command/"),
        _ => None,
    };
    let path = path.ok_or_else(|| format!("not a command: {line:?}"))?;
    let (action, parameter) = match path.split_once('/') {
        Some((action, parameter)) => (action, Some(parameter)),
        None => (path, None),
    };
    Control::parse(action, parameter)
}
