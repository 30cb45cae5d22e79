//! The RBAC objects as an [`RbacIndex`], rebuilt only after an RBAC object was written: the
//! cache follows the store's event log and drops its index when an event of an RBAC resource
//! (or a gap in the log) goes by, so an authorization costs a lookup, not a read of every role.
//! The cache starts following the log on its first use (a server that never authorizes with
//! RBAC never subscribes).

use std::sync::{Arc, Mutex};

use tokio::sync::broadcast::{self, error::TryRecvError};

use super::rbac::{RbacIndex, RBAC_GROUP};
use crate::store::{Store, StoreEvent};

/// A cached [`RbacIndex`].
pub(crate) struct PolicyCache {
    state: Mutex<State>,
}

struct State {
    /// The store's events since the index was built; `None` before the first use.
    events: Option<broadcast::Receiver<Arc<StoreEvent>>>,
    index: Option<Arc<RbacIndex>>,
}

impl PolicyCache {
    /// An empty cache; it follows the store's writes from its first [`index`](Self::index).
    pub(crate) fn new() -> Self {
        Self {
            state: Mutex::new(State {
                events: None,
                index: None,
            }),
        }
    }

    /// Forgets the index (after the store was replaced wholesale).
    pub(crate) fn invalidate(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).index = None;
    }

    /// The index of the RBAC objects stored now.
    pub(crate) fn index(&self, store: &Store) -> Arc<RbacIndex> {
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *guard;
        let Some(events) = state.events.as_mut() else {
            // Subscribed before the load: a write racing with it invalidates the index.
            state.events = Some(store.subscribe());
            let index = Arc::new(RbacIndex::load(store));
            state.index = Some(index.clone());
            return index;
        };
        loop {
            match events.try_recv() {
                Ok(event) => {
                    if event
                        .resource
                        .split_once('/')
                        .is_some_and(|(group, _)| group == RBAC_GROUP)
                    {
                        state.index = None;
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Lagged(_)) => state.index = None,
                Err(TryRecvError::Closed) => {
                    state.index = None;
                    break;
                }
            }
        }
        if let Some(index) = &state.index {
            return index.clone();
        }
        let index = Arc::new(RbacIndex::load(store));
        state.index = Some(index.clone());
        index
    }
}
