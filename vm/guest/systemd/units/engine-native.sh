pinrun --node 1 --cores 1 --fifo 50 --membind --emit systemd --cgroup -- /usr/local/bin/engine > /etc/systemd/system/engine-native.service
echo 'ExecStartPre=/usr/local/bin/pinrun --check-emitted /etc/systemd/system/engine-native.service' >> /etc/systemd/system/engine-native.service
systemctl daemon-reload
