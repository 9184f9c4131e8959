# Sourced on the GPU machine (gpu-run.sh, plugins/vulkan/bench/vk_diag.sh): unpacks the carried
# Vulkan loader (.gl/*.deb) and points the loader at the NVIDIA driver. The ICD json shipped
# there names libGLX_nvidia.so.0, which fails headless: write one that names libEGL_nvidia.so.0
# (same Vulkan driver, no X).
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
nv_egl=$(ls /usr/local/nvidia/lib64/libEGL_nvidia.so.0 2>/dev/null || find /usr /lib /lib64 /opt -name libEGL_nvidia.so.0 2>/dev/null | head -1)
if [ -n "$nv_egl" ]; then
  printf '{"file_format_version":"1.0.0","ICD":{"library_path":"%s","api_version":"1.3.0"}}\n' "$nv_egl" >/tmp/tc_nvidia_icd.json
  export VK_DRIVER_FILES=/tmp/tc_nvidia_icd.json
elif ! ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
echo "vulkan ICD: ${VK_DRIVER_FILES:-loader default} (${nv_egl:-no libEGL_nvidia found})"
