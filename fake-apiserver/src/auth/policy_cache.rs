//! The RBAC objects as an [`RbacIndex`], rebuilt only after an RBAC object was written: the
//! cache follows the store's event log and drops its index when an event of an RBAC resource
//! (or a gap in the log) goes by, so an authorization costs a lookup, not a read of every role.

use std::sync::{Arc, Mutex};

use tokio::sync::broadcast::{self, error::TryRecvError};

use super::rbac::{RbacIndex, RBAC_GROUP};
use crate::store::{Store, StoreEvent};

/// A cached [`RbacIndex`].
pub(crate) struct PolicyCache {
    state: Mutex<State>,
}

struct State {
    events: broadcast::Receiver<Arc<StoreEvent>>,
    index: Option<Arc<RbacIndex>>,
}

impl PolicyCache {
    /// A cache following `store`'s writes from now on.
    pub(crate) fn new(store: &Store) -> Self {
        Self {
            state: Mutex::new(State {
                events: store.subscribe(),
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
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match state.events.try_recv() {
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
