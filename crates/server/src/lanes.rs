//! Where heavy work waits its turn: at most `heavy_per_client` at once
//! for one client (by its address), and `heavy_concurrency` in all. One
//! slot for everyone let two clients that kept budget-long requests
//! running make every other client's small expansion wait out their
//! budgets (5 of 6 failed after 10 s); now a client's long requests queue
//! behind each other, and another client's find a slot, sharing the CPUs
//! at the same low priority ([`crate::fhir::work`] runs them).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Where heavy work waits its turn: see the module doc.
#[derive(Debug)]
pub struct Lanes {
    total: tokio::sync::Semaphore,
    per_client: usize,
    clients: Mutex<HashMap<Option<IpAddr>, Arc<tokio::sync::Semaphore>>>,
}

/// A place in the lanes, held while the work runs.
#[derive(Debug)]
pub struct Turn<'a> {
    _client: Option<tokio::sync::OwnedSemaphorePermit>,
    _total: Option<tokio::sync::SemaphorePermit<'a>>,
}

impl Lanes {
    /// `total` heavy operations at once, `per_client` of them for one
    /// client.
    pub fn new(total: usize, per_client: usize) -> Lanes {
        Lanes {
            total: tokio::sync::Semaphore::new(total),
            per_client,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Waits for a turn of `client`'s (`None`: a request without a
    /// connection, as in tests): first behind the client's own, then in
    /// the common lane. The semaphores are never closed.
    pub async fn turn(&self, client: Option<IpAddr>) -> Turn<'_> {
        let own = {
            let Ok(mut clients) = self.clients.lock() else {
                return Turn {
                    _client: None,
                    _total: self.total.acquire().await.ok(),
                };
            };
            // Clients with nothing running or waiting are forgotten.
            if clients.len() > 4096 {
                let per_client = self.per_client;
                clients
                    .retain(|_, s| Arc::strong_count(s) > 1 || s.available_permits() < per_client);
            }
            Arc::clone(
                clients
                    .entry(client)
                    .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(self.per_client))),
            )
        };
        let client = own.acquire_owned().await.ok();
        Turn {
            _client: client,
            _total: self.total.acquire().await.ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Whether a turn is given now (it is not, when it has to wait).
    async fn given_now(lanes: &Lanes, client: Option<IpAddr>) -> Option<Turn<'_>> {
        tokio::time::timeout(Duration::from_millis(20), lanes.turn(client))
            .await
            .ok()
    }

    #[tokio::test]
    async fn a_clients_heavy_work_waits_behind_its_own_not_in_front_of_others() {
        let lanes = Lanes::new(3, 1);
        let (a, b, c) = (
            Some("192.0.2.1".parse().unwrap()),
            Some("192.0.2.2".parse().unwrap()),
            Some("192.0.2.3".parse().unwrap()),
        );
        let first_a = given_now(&lanes, a).await.expect("a's first");
        // a's second waits for a's first; b and c go ahead of it.
        assert!(given_now(&lanes, a).await.is_none());
        let first_b = given_now(&lanes, b).await.expect("b's first");
        let first_c = given_now(&lanes, c).await.expect("c's first");
        // Every slot taken: a fourth client waits for one.
        let d = Some("192.0.2.4".parse().unwrap());
        assert!(given_now(&lanes, d).await.is_none());
        drop(first_b);
        assert!(given_now(&lanes, d).await.is_some());
        drop((first_a, first_c));
        assert!(given_now(&lanes, a).await.is_some());
    }
}
